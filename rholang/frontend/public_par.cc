// Converts the canonical IR to the public rhoapi.Par the F1R3FLY Rust node
// would hold for the same substituted term, and serializes it.
// Rules (facts read from the public node): docs/formats/public_par.md.
#include "rholang/frontend/public_par.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "RhoTypes.pb.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "rholang/frontend/internal/public_score.h"
#include "rholang/frontend/limits.h"

namespace rnode::rholang {
namespace {

using internal::CompareScore;
using internal::Score;

// Score-tree constants of the public sorter (reference rholang.md §3.4).
enum ScoreCode : int64_t {
  kAbsent = 0,
  kBool = 1,
  kInt = 2,
  kString = 3,
  kUri = 4,
  kPrivate = 5,
  kEList = 6,
  kETuple = 7,
  kESet = 8,
  kEMap = 9,
  kDeployerAuth = 10,
  kDeployId = 11,
  kSysAuthToken = 12,
  kBoundVar = 50,
  kFreeVar = 51,
  kWildcard = 52,
  kEVar = 100,
  kENeg = 101,
  kEMult = 102,
  kEDiv = 103,
  kEPlus = 104,
  kEMinus = 105,
  kELt = 106,
  kELte = 107,
  kEGt = 108,
  kEGte = 109,
  kEEq = 110,
  kENeq = 111,
  kENot = 112,
  kEAnd = 113,
  kEOr = 114,
  kEMethod = 115,
  kEByteArray = 116,
  kEMatches = 118,
  kEPercent = 119,
  kEPlusPlus = 120,
  kEMinusMinus = 121,
  kEMod = 122,
  kEShortAnd = 123,  // the RChain Scala sorter's tags; the Rust node has no
  kEShortOr = 124,   // short-circuit operators
  kSend = 300,
  kReceive = 301,
  kNew = 303,
  kMatch = 304,
  kBundleEquiv = 305,
  kBundleRead = 306,
  kBundleWrite = 307,
  kBundleReadWrite = 308,
  kIf = 309,
  kConnNot = 400,
  kConnAnd = 401,
  kConnOr = 402,
  kConnVarRef = 403,
  kConnBool = 404,
  kConnInt = 405,
  kConnString = 406,
  kConnUri = 407,
  kConnByteArray = 408,
  kPar = 999,
};

// The public locally_free byte vector (one byte per index, OR-combined).
using Lf = std::string;

void UnionInto(Lf& acc, const Lf& other) {
  if (other.size() > acc.size()) acc.resize(other.size(), '\0');
  for (size_t i = 0; i < other.size(); ++i) {
    acc[i] = static_cast<char>(static_cast<uint8_t>(acc[i]) |
                               static_cast<uint8_t>(other[i]));
  }
}

Lf BitVector(uint32_t index) {
  Lf v(index + 1, '\0');
  v[index] = 1;
  return v;
}

// The public normalizer's binder adjustment: for a body vector of length L
// and n bound names it yields the positions 0..L-n-1 (not shifted bits).
Lf FilterAndAdjust(const Lf& body, uint32_t bound) {
  Lf out;
  for (size_t i = bound; i < body.size(); ++i) {
    out.push_back(static_cast<char>(static_cast<uint8_t>(i - bound)));
  }
  return out;
}

// Substitution keeps the first `shift` entries of a stored vector.
std::string Truncate(const Lf& lf, uint32_t shift) {
  return lf.substr(0, std::min<size_t>(lf.size(), shift));
}

// What converting one node yields besides the message.
struct Info {
  Score score;
  bool connective_used = false;
  Lf lf;  // the normalizer-time vector (before substitution truncates it)
};

std::string AsString(const Bytes& b) { return std::string(b.begin(), b.end()); }

class Converter {
 public:
  // Par at binder shift `shift` and pattern depth `depth`.
  Info ConvertPar(const ir::Par& p, uint32_t shift, uint32_t depth,
                  rhoapi::Par* out) {
    std::vector<Score> scores;
    bool cu = false;
    Lf lf;
    auto take = [&](Info& info) {
      scores.push_back(std::move(info.score));
      cu = cu || info.connective_used;
      UnionInto(lf, info.lf);
    };
    // Score order of the public Par: sends, receives, exprs, news, matches,
    // bundles, connectives, unforgeables, conditionals.
    std::vector<Info> sends = SortGroup(
        p.sends, out->mutable_sends(), [&](const ir::Send& x, rhoapi::Send* m) {
          return ConvertSend(x, shift, depth, m);
        });
    std::vector<Info> receives =
        SortGroup(p.receives, out->mutable_receives(),
                  [&](const ir::Receive& x, rhoapi::Receive* m) {
                    return ConvertReceive(x, shift, depth, m);
                  });
    std::vector<Info> exprs = SortGroup(
        p.exprs, out->mutable_exprs(), [&](const ir::Expr& x, rhoapi::Expr* m) {
          return ConvertExpr(x, shift, depth, m);
        });
    std::vector<Info> news = SortGroup(p.news, out->mutable_news(),
                                       [&](const ir::New& x, rhoapi::New_* m) {
                                         return ConvertNew(x, shift, depth, m);
                                       });
    std::vector<Info> matches =
        SortGroup(p.matches, out->mutable_matches(),
                  [&](const ir::Match& x, rhoapi::Match* m) {
                    return ConvertMatch(x, shift, depth, m);
                  });
    std::vector<Info> bundles =
        SortGroup(p.bundles, out->mutable_bundles(),
                  [&](const ir::Bundle& x, rhoapi::Bundle* m) {
                    return ConvertBundle(x, shift, depth, m);
                  });
    std::vector<Info> connectives =
        SortGroup(p.connectives, out->mutable_connectives(),
                  [&](const ir::Connective& x, rhoapi::Connective* m) {
                    return ConvertConnective(x, shift, depth, m);
                  });
    std::vector<Info> unforgeables =
        SortGroup(p.unforgeables, out->mutable_unforgeables(),
                  [&](const ir::Unforgeable& x, rhoapi::GUnforgeable* m) {
                    return ConvertUnforgeable(x, m);
                  });
    std::vector<Info> conditionals =
        SortGroup(p.conditionals, out->mutable_conditionals(),
                  [&](const ir::If& x, rhoapi::If* m) {
                    return ConvertIf(x, shift, depth, m);
                  });
    for (std::vector<Info>* group :
         {&sends, &receives, &exprs, &news, &matches, &bundles, &connectives,
          &unforgeables, &conditionals}) {
      for (Info& i : *group) take(i);
    }
    scores.push_back(Score::Int(cu ? 1 : 0));
    out->set_locallyfree(Truncate(lf, shift));
    out->set_connective_used(cu);
    return {Score::Tagged(kPar, std::move(scores)), cu, std::move(lf)};
  }

 private:
  // Converts each item into a fresh message, then appends the messages to
  // `out` ordered by score (stable: ties keep our canonical order). Returns
  // the infos in the emitted order.
  template <typename T, typename Msg, typename Fn>
  std::vector<Info> SortGroup(const std::vector<std::shared_ptr<const T>>& in,
                              google::protobuf::RepeatedPtrField<Msg>* out,
                              Fn convert) {
    std::vector<Msg> msgs(in.size());
    std::vector<Info> infos;
    infos.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      infos.push_back(convert(*in[i], &msgs[i]));
    }
    std::vector<size_t> order(in.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return CompareScore(infos[a].score, infos[b].score) < 0;
    });
    std::vector<Info> sorted;
    sorted.reserve(in.size());
    for (size_t i : order) {
      *out->Add() = std::move(msgs[i]);
      sorted.push_back(std::move(infos[i]));
    }
    return sorted;
  }

  static Score EmptyParScore() { return Score::Tagged(kPar, {Score::Int(0)}); }

  static Score VarScore(const ir::Var& v) {
    switch (v.kind) {
      case ir::VarKind::kBound:
        return Score::Node({Score::Int(kBoundVar), Score::Int(v.index)});
      case ir::VarKind::kFree:
        return Score::Node({Score::Int(kFreeVar), Score::Int(v.index)});
      case ir::VarKind::kWildcard:
        return Score::Node({Score::Int(kWildcard)});
    }
    return Score::Node({});
  }

  static void FillVar(const ir::Var& v, rhoapi::Var* m) {
    switch (v.kind) {
      case ir::VarKind::kBound:
        m->set_bound_var(static_cast<int32_t>(v.index));
        return;
      case ir::VarKind::kFree:
        m->set_free_var(static_cast<int32_t>(v.index));
        return;
      case ir::VarKind::kWildcard:
        m->mutable_wildcard();
        return;
    }
  }

  Info ConvertSend(const ir::Send& s, uint32_t shift, uint32_t depth,
                   rhoapi::Send* m) {
    Info chan = ConvertPar(*s.chan, shift, depth, m->mutable_chan());
    std::vector<Score> scores;
    scores.push_back(Score::Int(s.persistent ? 1 : 0));
    scores.push_back(std::move(chan.score));
    bool cu = chan.connective_used;
    Lf lf = chan.lf;
    for (const ir::ParPtr& d : s.data) {
      Info di = ConvertPar(*d, shift, depth, m->add_data());
      scores.push_back(std::move(di.score));
      cu = cu || di.connective_used;
      UnionInto(lf, di.lf);
    }
    scores.push_back(Score::Int(cu ? 1 : 0));
    m->set_persistent(s.persistent);
    m->set_locallyfree(Truncate(lf, shift));
    m->set_connective_used(cu);
    return {Score::Tagged(kSend, std::move(scores)), cu, std::move(lf)};
  }

  Info ConvertReceive(const ir::Receive& r, uint32_t shift, uint32_t depth,
                      rhoapi::Receive* m) {
    std::vector<Score> scores;
    scores.push_back(Score::Int(r.persistent ? 1 : 0));
    scores.push_back(Score::Int(r.peek ? 1 : 0));
    bool cu = false;
    Lf lf;
    // Each bind scores as Node[source, patterns..., remainder or 0].
    size_t n = r.binds.size();
    std::vector<rhoapi::ReceiveBind> bind_msgs(n);
    std::vector<Score> bind_scores(n);
    for (size_t k = 0; k < n; ++k) {
      const ir::ReceiveBind& b = r.binds[k];
      rhoapi::ReceiveBind* bm = &bind_msgs[k];
      std::vector<Score> pattern_scores;
      for (const ir::ParPtr& pat : b.patterns) {
        Info pi = ConvertPar(*pat, shift, depth + 1, bm->add_patterns());
        pattern_scores.push_back(std::move(pi.score));
        UnionInto(lf, pi.lf);
      }
      Info src = ConvertPar(*b.source, shift, depth, bm->mutable_source());
      cu = cu || src.connective_used;
      UnionInto(lf, src.lf);
      std::vector<Score> parts;
      parts.push_back(std::move(src.score));
      for (Score& ps : pattern_scores) parts.push_back(std::move(ps));
      if (b.remainder.has_value()) {
        FillVar(*b.remainder, bm->mutable_remainder());
        parts.push_back(VarScore(*b.remainder));
      } else {
        parts.push_back(Score::Int(kAbsent));
      }
      bm->set_freecount(static_cast<int32_t>(b.free_count));
      bind_scores[k] = Score::Node(std::move(parts));
    }
    // The public normalizer orders a join's binds by score and numbers the
    // body's variables in that order; ours orders them by hash.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return CompareScore(bind_scores[a], bind_scores[b]) < 0;
    });
    for (size_t k : order) {
      *m->add_binds() = std::move(bind_msgs[k]);
      scores.push_back(std::move(bind_scores[k]));
    }
    bool remapped = PushBindRemap(r, order, shift + r.bind_count);
    Info body =
        ConvertPar(*r.body, shift + r.bind_count, depth, m->mutable_body());
    if (remapped) remaps_.pop_back();
    cu = cu || body.connective_used;
    UnionInto(lf, FilterAndAdjust(body.lf, r.bind_count));
    scores.push_back(std::move(body.score));
    scores.push_back(Score::Int(r.bind_count));
    scores.push_back(Score::Int(cu ? 1 : 0));
    scores.push_back(EmptyParScore());  // no `where` condition
    m->set_persistent(r.persistent);
    m->set_peek(r.peek);
    m->set_bindcount(static_cast<int32_t>(r.bind_count));
    m->set_locallyfree(Truncate(lf, shift));
    m->set_connective_used(cu);
    return {Score::Tagged(kReceive, std::move(scores)), cu, std::move(lf)};
  }

  // Renumbering of a receive's body variables when the public bind order
  // `order` differs from ours. Returns whether a remap was pushed.
  bool PushBindRemap(const ir::Receive& r, const std::vector<size_t>& order,
                     uint32_t body_shift) {
    bool identity = true;
    for (size_t k = 0; k < order.size(); ++k) identity &= order[k] == k;
    uint32_t total = 0;
    for (const ir::ReceiveBind& b : r.binds) total += b.free_count;
    if (identity || total != r.bind_count) return false;
    // Our capture positions: binds in our order, captures in level order;
    // the last capture is de Bruijn index 0 in the body.
    std::vector<uint32_t> ours(r.binds.size());
    std::vector<uint32_t> theirs(r.binds.size());
    uint32_t offset = 0;
    for (size_t k = 0; k < r.binds.size(); ++k) {
      ours[k] = offset;
      offset += r.binds[k].free_count;
    }
    offset = 0;
    for (size_t k : order) {
      theirs[k] = offset;
      offset += r.binds[k].free_count;
    }
    Remap remap;
    remap.body_shift = body_shift;
    remap.new_index.resize(r.bind_count);
    uint32_t last = r.bind_count - 1;
    for (size_t k = 0; k < r.binds.size(); ++k) {
      for (uint32_t o = 0; o < r.binds[k].free_count; ++o) {
        remap.new_index[last - (ours[k] + o)] = last - (theirs[k] + o);
      }
    }
    remaps_.push_back(std::move(remap));
    return true;
  }

  // A bound variable as the public numbering names it.
  ir::Var Renumbered(const ir::Var& v, uint32_t shift) const {
    if (v.kind != ir::VarKind::kBound) return v;
    for (auto it = remaps_.rbegin(); it != remaps_.rend(); ++it) {
      if (shift < it->body_shift) continue;     // outside that body
      uint32_t inner = shift - it->body_shift;  // binders crossed since
      if (v.index >= inner && v.index - inner < it->new_index.size()) {
        return ir::Var{ir::VarKind::kBound,
                       inner + it->new_index[v.index - inner]};
      }
    }
    return v;
  }

  Info ConvertNew(const ir::New& n, uint32_t shift, uint32_t depth,
                  rhoapi::New_* m) {
    Info body =
        ConvertPar(*n.body, shift + n.bind_count, depth, m->mutable_p());
    std::vector<Score> scores;
    scores.push_back(Score::Int(kNew));
    scores.push_back(Score::Int(n.bind_count));
    if (n.uris.empty()) {
      scores.push_back(Score::Int(kAbsent));
    } else {
      for (const std::string& u : n.uris) scores.push_back(Score::Text(u));
    }
    if (n.injections.empty()) {
      scores.push_back(Score::Int(kAbsent));
    } else {
      auto* inj = m->mutable_injections();
      for (const auto& [key, value] : n.injections) {
        rhoapi::Par vm;
        Info vi = ConvertPar(*value, 0, 0, &vm);
        (*inj)[key] = std::move(vm);
        scores.push_back(Score::Node({Score::Text(key), std::move(vi.score)}));
      }
    }
    scores.push_back(std::move(body.score));
    for (const std::string& u : n.uris) m->add_uri(u);
    m->set_bindcount(static_cast<int32_t>(n.bind_count));
    Lf lf = FilterAndAdjust(body.lf, n.bind_count);
    m->set_locallyfree(Truncate(lf, shift));
    return {Score::Node(std::move(scores)), body.connective_used,
            std::move(lf)};
  }

  Info ConvertMatch(const ir::Match& mt, uint32_t shift, uint32_t depth,
                    rhoapi::Match* m) {
    Info target = ConvertPar(*mt.target, shift, depth, m->mutable_target());
    std::vector<Score> scores;
    scores.push_back(std::move(target.score));
    bool cu = target.connective_used;
    Lf lf = target.lf;
    for (const ir::MatchCase& c : mt.cases) {
      rhoapi::MatchCase* cm = m->add_cases();
      Info pat =
          ConvertPar(*c.pattern, shift, depth + 1, cm->mutable_pattern());
      Info body = ConvertPar(*c.body, shift + c.free_count, depth,
                             cm->mutable_source());
      cm->set_freecount(static_cast<int32_t>(c.free_count));
      cu = cu || body.connective_used;
      UnionInto(lf, pat.lf);
      UnionInto(lf, FilterAndAdjust(body.lf, c.free_count));
      scores.push_back(
          Score::Node({std::move(pat.score), std::move(body.score),
                       Score::Int(c.free_count), EmptyParScore()}));
    }
    scores.push_back(Score::Int(cu ? 1 : 0));
    m->set_locallyfree(Truncate(lf, shift));
    m->set_connective_used(cu);
    return {Score::Tagged(kMatch, std::move(scores)), cu, std::move(lf)};
  }

  Info ConvertIf(const ir::If& f, uint32_t shift, uint32_t depth,
                 rhoapi::If* m) {
    Info c = ConvertPar(*f.condition, shift, depth, m->mutable_condition());
    Info t = ConvertPar(*f.if_true, shift, depth, m->mutable_if_true());
    Info e = ConvertPar(*f.if_false, shift, depth, m->mutable_if_false());
    bool cu = c.connective_used || t.connective_used || e.connective_used;
    Lf lf = c.lf;
    UnionInto(lf, t.lf);
    UnionInto(lf, e.lf);
    m->set_locallyfree(Truncate(lf, shift));
    m->set_connective_used(cu);
    return {Score::Tagged(kIf, {std::move(c.score), std::move(t.score),
                                std::move(e.score), Score::Int(cu ? 1 : 0)}),
            cu, std::move(lf)};
  }

  Info ConvertBundle(const ir::Bundle& b, uint32_t shift, uint32_t depth,
                     rhoapi::Bundle* m) {
    Info body = ConvertPar(*b.body, shift, depth, m->mutable_body());
    m->set_writeflag(b.write_flag);
    m->set_readflag(b.read_flag);
    int64_t code = b.write_flag && b.read_flag ? kBundleReadWrite
                   : b.write_flag              ? kBundleWrite
                   : b.read_flag               ? kBundleRead
                                               : kBundleEquiv;
    return {Score::Tagged(code, {std::move(body.score)}), false,
            std::move(body.lf)};
  }

  Info ConvertConnective(const ir::Connective& c, uint32_t shift,
                         uint32_t depth, rhoapi::Connective* m) {
    auto body = [&](int64_t code, rhoapi::ConnectiveBody* cb) {
      std::vector<Score> scores;
      for (const ir::ParPtr& p : c.ps) {
        scores.push_back(ConvertPar(*p, shift, depth, cb->add_ps()).score);
      }
      return Info{Score::Tagged(code, std::move(scores)), true, {}};
    };
    auto simple = [](int64_t code) {
      return Info{Score::Node({Score::Int(code), Score::Int(1)}), true, {}};
    };
    switch (c.kind) {
      case ir::ConnectiveKind::kAnd:
        return body(kConnAnd, m->mutable_conn_and_body());
      case ir::ConnectiveKind::kOr:
        return body(kConnOr, m->mutable_conn_or_body());
      case ir::ConnectiveKind::kNot: {
        Info p =
            ConvertPar(*c.ps.at(0), shift, depth, m->mutable_conn_not_body());
        return {Score::Tagged(kConnNot, {std::move(p.score)}), true, {}};
      }
      case ir::ConnectiveKind::kVarRef: {
        rhoapi::VarRef* v = m->mutable_var_ref_body();
        v->set_index(static_cast<int32_t>(c.var_ref_index));
        v->set_depth(static_cast<int32_t>(c.var_ref_depth));
        Lf lf = c.var_ref_free ? BitVector(c.var_ref_index) : Lf();
        return {
            Score::Node({Score::Int(kConnVarRef), Score::Int(c.var_ref_index),
                         Score::Int(c.var_ref_depth)}),
            false, std::move(lf)};
      }
      case ir::ConnectiveKind::kBool:
        m->set_conn_bool(true);
        return simple(kConnBool);
      case ir::ConnectiveKind::kInt:
        m->set_conn_int(true);
        return simple(kConnInt);
      case ir::ConnectiveKind::kString:
        m->set_conn_string(true);
        return simple(kConnString);
      case ir::ConnectiveKind::kUri:
        m->set_conn_uri(true);
        return simple(kConnUri);
      case ir::ConnectiveKind::kByteArray:
        m->set_conn_byte_array(true);
        return simple(kConnByteArray);
    }
    return {};
  }

  static Info ConvertUnforgeable(const ir::Unforgeable& u,
                                 rhoapi::GUnforgeable* m) {
    std::string id = AsString(u.id);
    switch (u.kind) {
      case ir::UnforgeableKind::kPrivate:
        m->mutable_g_private_body()->set_id(id);
        return {Score::Tagged(kPrivate, {Score::Bytes(id)}), false, {}};
      case ir::UnforgeableKind::kDeployId:
        m->mutable_g_deploy_id_body()->set_sig(id);
        return {Score::Tagged(kDeployId, {Score::Bytes(id)}), false, {}};
      case ir::UnforgeableKind::kDeployerId:
        m->mutable_g_deployer_id_body()->set_publickey(id);
        return {Score::Tagged(kDeployerAuth, {Score::Bytes(id)}), false, {}};
      case ir::UnforgeableKind::kSysAuthToken:
        m->mutable_g_sys_auth_token_body();
        return {Score::Tagged(kSysAuthToken), false, {}};
    }
    return {};
  }

  // Converts `ps` into `out` in the given order; returns their infos.
  std::vector<Info> ConvertList(
      const std::vector<ir::ParPtr>& ps, uint32_t shift, uint32_t depth,
      google::protobuf::RepeatedPtrField<rhoapi::Par>* out) {
    std::vector<Info> infos;
    infos.reserve(ps.size());
    for (const ir::ParPtr& p : ps) {
      infos.push_back(ConvertPar(*p, shift, depth, out->Add()));
    }
    return infos;
  }

  // Converts `ps` and appends them to `out` ordered by score.
  std::vector<Info> ConvertSorted(
      const std::vector<ir::ParPtr>& ps, uint32_t shift, uint32_t depth,
      google::protobuf::RepeatedPtrField<rhoapi::Par>* out) {
    std::vector<rhoapi::Par> msgs(ps.size());
    std::vector<Info> infos;
    infos.reserve(ps.size());
    for (size_t i = 0; i < ps.size(); ++i) {
      infos.push_back(ConvertPar(*ps[i], shift, depth, &msgs[i]));
    }
    std::vector<size_t> order(ps.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return CompareScore(infos[a].score, infos[b].score) < 0;
    });
    std::vector<Info> sorted;
    for (size_t i : order) {
      *out->Add() = std::move(msgs[i]);
      sorted.push_back(std::move(infos[i]));
    }
    return sorted;
  }

  // Any binary operator message (fields p1, p2).
  template <typename Msg>
  Info Binary(int64_t code, const ir::Expr& e, uint32_t shift, uint32_t depth,
              Msg* body) {
    Info a = ConvertPar(*e.operands.at(0), shift, depth, body->mutable_p1());
    Info b = ConvertPar(*e.operands.at(1), shift, depth, body->mutable_p2());
    bool cu = a.connective_used || b.connective_used;
    Lf lf = std::move(a.lf);
    UnionInto(lf, b.lf);
    return {Score::Tagged(code, {std::move(a.score), std::move(b.score)}), cu,
            std::move(lf)};
  }

  Info ConvertExpr(const ir::Expr& e, uint32_t shift, uint32_t depth,
                   rhoapi::Expr* m) {
    using K = ir::ExprKind;
    switch (e.kind) {
      case K::kBool:
        m->set_g_bool(e.bool_value);
        // The public sorter scores true as 0 and false as 1.
        return {
            Score::Node({Score::Int(kBool), Score::Int(e.bool_value ? 0 : 1)}),
            false,
            {}};
      case K::kInt:
        m->set_g_int(e.int_value);
        return {Score::Node({Score::Int(kInt), Score::Int(e.int_value)}),
                false,
                {}};
      case K::kString:
        m->set_g_string(e.text);
        return {Score::Tagged(kString, {Score::Text(e.text)}), false, {}};
      case K::kUri:
        m->set_g_uri(e.text);
        return {Score::Tagged(kUri, {Score::Text(e.text)}), false, {}};
      case K::kByteArray:
        m->set_g_byte_array(e.text);
        return {Score::Tagged(kEByteArray, {Score::Bytes(e.text)}), false, {}};
      case K::kVar: {
        ir::Var v = Renumbered(e.var, shift);
        FillVar(v, m->mutable_e_var_body()->mutable_v());
        bool cu = v.kind != ir::VarKind::kBound;
        Lf lf = v.kind == ir::VarKind::kBound && depth == 0 ? BitVector(v.index)
                                                            : Lf();
        return {Score::Tagged(kEVar, {VarScore(v)}), cu, std::move(lf)};
      }
      case K::kNot: {
        Info p = ConvertPar(*e.operands.at(0), shift, depth,
                            m->mutable_e_not_body()->mutable_p());
        return {Score::Tagged(kENot, {std::move(p.score)}), p.connective_used,
                std::move(p.lf)};
      }
      case K::kNeg: {
        Info p = ConvertPar(*e.operands.at(0), shift, depth,
                            m->mutable_e_neg_body()->mutable_p());
        return {Score::Tagged(kENeg, {std::move(p.score)}), p.connective_used,
                std::move(p.lf)};
      }
      case K::kMul:
        return Binary(kEMult, e, shift, depth, m->mutable_e_mult_body());
      case K::kDiv:
        return Binary(kEDiv, e, shift, depth, m->mutable_e_div_body());
      case K::kMod:
        return Binary(kEMod, e, shift, depth, m->mutable_e_mod_body());
      case K::kShortAnd:
        return Binary(kEShortAnd, e, shift, depth,
                      m->mutable_e_short_and_body());
      case K::kShortOr:
        return Binary(kEShortOr, e, shift, depth, m->mutable_e_short_or_body());
      case K::kAdd:
        return Binary(kEPlus, e, shift, depth, m->mutable_e_plus_body());
      case K::kSub:
        return Binary(kEMinus, e, shift, depth, m->mutable_e_minus_body());
      case K::kLt:
        return Binary(kELt, e, shift, depth, m->mutable_e_lt_body());
      case K::kLte:
        return Binary(kELte, e, shift, depth, m->mutable_e_lte_body());
      case K::kGt:
        return Binary(kEGt, e, shift, depth, m->mutable_e_gt_body());
      case K::kGte:
        return Binary(kEGte, e, shift, depth, m->mutable_e_gte_body());
      case K::kEq:
        return Binary(kEEq, e, shift, depth, m->mutable_e_eq_body());
      case K::kNeq:
        return Binary(kENeq, e, shift, depth, m->mutable_e_neq_body());
      case K::kAnd:
        return Binary(kEAnd, e, shift, depth, m->mutable_e_and_body());
      case K::kOr:
        return Binary(kEOr, e, shift, depth, m->mutable_e_or_body());
      case K::kPercentPercent:
        return Binary(kEPercent, e, shift, depth,
                      m->mutable_e_percent_percent_body());
      case K::kPlusPlus:
        return Binary(kEPlusPlus, e, shift, depth,
                      m->mutable_e_plus_plus_body());
      case K::kMinusMinus:
        return Binary(kEMinusMinus, e, shift, depth,
                      m->mutable_e_minus_minus_body());
      case K::kMatches: {
        auto* body = m->mutable_e_matches_body();
        Info t =
            ConvertPar(*e.operands.at(0), shift, depth, body->mutable_target());
        Info p = ConvertPar(*e.operands.at(1), shift, depth + 1,
                            body->mutable_pattern());
        // Only the target counts for connective_used and locally_free.
        return {
            Score::Tagged(kEMatches, {std::move(t.score), std::move(p.score)}),
            t.connective_used, std::move(t.lf)};
      }
      case K::kList: {
        auto* body = m->mutable_e_list_body();
        std::vector<Info> infos =
            ConvertList(e.operands, shift, depth, body->mutable_ps());
        return Collection(kEList, e, std::move(infos), shift, body);
      }
      case K::kSet: {
        auto* body = m->mutable_e_set_body();
        std::vector<Info> infos =
            ConvertSorted(e.operands, shift, depth, body->mutable_ps());
        return Collection(kESet, e, std::move(infos), shift, body);
      }
      case K::kTuple: {
        auto* body = m->mutable_e_tuple_body();
        std::vector<Info> infos =
            ConvertList(e.operands, shift, depth, body->mutable_ps());
        std::vector<Score> scores;
        bool cu = false;
        Lf lf;
        for (Info& i : infos) {
          scores.push_back(std::move(i.score));
          cu = cu || i.connective_used;
          UnionInto(lf, i.lf);
        }
        scores.push_back(Score::Int(cu ? 1 : 0));
        body->set_locallyfree(Truncate(lf, shift));
        body->set_connective_used(cu);
        return {Score::Tagged(kETuple, std::move(scores)), cu, std::move(lf)};
      }
      case K::kMap:
        return ConvertMap(e, shift, depth, m->mutable_e_map_body());
      case K::kMethod: {
        auto* body = m->mutable_e_method_body();
        body->set_methodname(e.text);
        Info t = ConvertPar(*e.target, shift, depth, body->mutable_target());
        std::vector<Score> scores;
        scores.push_back(Score::Text(e.text));
        scores.push_back(std::move(t.score));
        bool cu = t.connective_used;
        Lf lf = std::move(t.lf);
        for (Info& a :
             ConvertList(e.operands, shift, depth, body->mutable_arguments())) {
          scores.push_back(std::move(a.score));
          cu = cu || a.connective_used;
          UnionInto(lf, a.lf);
        }
        scores.push_back(Score::Int(cu ? 1 : 0));
        body->set_locallyfree(Truncate(lf, shift));
        body->set_connective_used(cu);
        return {Score::Tagged(kEMethod, std::move(scores)), cu, std::move(lf)};
      }
    }
    return {};
  }

  static Score RemainderScore(const std::optional<ir::Var>& r) {
    return r.has_value() ? VarScore(*r) : Score::Int(-1);
  }

  // EList / ESet: Node[code, remainder, elements..., connective_used].
  template <typename Msg>
  Info Collection(int64_t code, const ir::Expr& e, std::vector<Info> infos,
                  uint32_t shift, Msg* body) {
    std::vector<Score> scores;
    scores.push_back(Score::Int(code));
    scores.push_back(RemainderScore(e.remainder));
    bool cu = e.remainder.has_value();
    Lf lf;
    for (Info& i : infos) {
      scores.push_back(std::move(i.score));
      cu = cu || i.connective_used;
      UnionInto(lf, i.lf);
    }
    scores.push_back(Score::Int(cu ? 1 : 0));
    if (e.remainder.has_value())
      FillVar(*e.remainder, body->mutable_remainder());
    body->set_locallyfree(Truncate(lf, shift));
    body->set_connective_used(cu);
    return {Score::Node(std::move(scores)), cu, std::move(lf)};
  }

  Info ConvertMap(const ir::Expr& e, uint32_t shift, uint32_t depth,
                  rhoapi::EMap* body) {
    size_t n = e.operands.size() / 2;
    std::vector<rhoapi::KeyValuePair> kvs(n);
    std::vector<Info> keys;
    keys.reserve(n);
    bool cu = e.remainder.has_value();
    Lf lf;
    for (size_t i = 0; i < n; ++i) {
      Info k =
          ConvertPar(*e.operands[2 * i], shift, depth, kvs[i].mutable_key());
      Info v = ConvertPar(*e.operands[2 * i + 1], shift, depth,
                          kvs[i].mutable_value());
      cu = cu || k.connective_used || v.connective_used;
      UnionInto(lf, k.lf);
      UnionInto(lf, v.lf);
      keys.push_back(std::move(k));
    }
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return CompareScore(keys[a].score, keys[b].score) < 0;
    });
    std::vector<Score> scores;
    scores.push_back(Score::Int(kEMap));
    scores.push_back(RemainderScore(e.remainder));
    for (size_t i : order) {
      *body->add_kvs() = std::move(kvs[i]);
      scores.push_back(std::move(keys[i].score));
    }
    scores.push_back(Score::Int(cu ? 1 : 0));
    if (e.remainder.has_value())
      FillVar(*e.remainder, body->mutable_remainder());
    body->set_locallyfree(Truncate(lf, shift));
    body->set_connective_used(cu);
    return {Score::Node(std::move(scores)), cu, std::move(lf)};
  }

  // Active join renumberings, innermost last.
  struct Remap {
    uint32_t body_shift = 0;          // shift at the receive body
    std::vector<uint32_t> new_index;  // our relative index -> public
  };
  std::vector<Remap> remaps_;
};

}  // namespace

absl::StatusOr<Bytes> EncodePublicPar(const ir::Par& par) {
  if (par.height > kMaxIrDepth) {
    return absl::ResourceExhaustedError(
        absl::StrCat("term deeper than ", kMaxIrDepth));
  }
  rhoapi::Par msg;
  Converter().ConvertPar(par, 0, 0, &msg);
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!msg.SerializeToCodedStream(&coded)) {
      return absl::InternalError("protobuf serialization failed");
    }
  }
  return Bytes(out.begin(), out.end());
}

}  // namespace rnode::rholang
