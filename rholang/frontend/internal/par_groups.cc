// A Par's component groups (rholang/frontend/internal/par_groups.h).
#include "rholang/frontend/internal/par_groups.h"

namespace rnode::rholang::internal {

using ir::Par;

size_t GroupSize(const Par& p, int g) {
  switch (g) {
    case kSendGroup:
      return p.sends.size();
    case kReceiveGroup:
      return p.receives.size();
    case kNewGroup:
      return p.news.size();
    case kExprGroup:
      return p.exprs.size();
    case kMatchGroup:
      return p.matches.size();
    case kUnforgeableGroup:
      return p.unforgeables.size();
    case kBundleGroup:
      return p.bundles.size();
    case kConnectiveGroup:
      return p.connectives.size();
    default:
      return p.conditionals.size();
  }
}

const ir::NodeInfo& GroupItem(const Par& p, int g, size_t i) {
  switch (g) {
    case kSendGroup:
      return *p.sends[i];
    case kReceiveGroup:
      return *p.receives[i];
    case kNewGroup:
      return *p.news[i];
    case kExprGroup:
      return *p.exprs[i];
    case kMatchGroup:
      return *p.matches[i];
    case kUnforgeableGroup:
      return *p.unforgeables[i];
    case kBundleGroup:
      return *p.bundles[i];
    case kConnectiveGroup:
      return *p.connectives[i];
    default:
      return *p.conditionals[i];
  }
}

void AddGroupItem(const Par& p, int g, size_t i, ir::ParBuilder& b) {
  switch (g) {
    case kSendGroup:
      b.Add(p.sends[i]);
      break;
    case kReceiveGroup:
      b.Add(p.receives[i]);
      break;
    case kNewGroup:
      b.Add(p.news[i]);
      break;
    case kExprGroup:
      b.Add(p.exprs[i]);
      break;
    case kMatchGroup:
      b.Add(p.matches[i]);
      break;
    case kUnforgeableGroup:
      b.Add(p.unforgeables[i]);
      break;
    case kBundleGroup:
      b.Add(p.bundles[i]);
      break;
    case kConnectiveGroup:
      b.Add(p.connectives[i]);
      break;
    default:
      b.Add(p.conditionals[i]);
      break;
  }
}

}  // namespace rnode::rholang::internal
