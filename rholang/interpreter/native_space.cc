#include "rholang/interpreter/native_space.h"

#include <utility>

#include "rholang/interpreter/term_codec.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp {

absl::Status SpaceNative::Charge(int64_t amount) {
  if (meter_ == nullptr) return absl::OkStatus();
  return meter_->Charge(amount);
}

namespace {

// Native reads use patterns of up to this many free variables from a table
// built once; longer data build theirs per read.
constexpr size_t kTabledArity = 8;

absl::StatusOr<rspace::TermPtr> MakeReadPattern(size_t arity) {
  BindPattern pattern;
  pattern.free_count = static_cast<uint32_t>(arity);
  for (uint32_t i = 0; i < pattern.free_count; ++i) {
    pattern.patterns.push_back(ir::VarPar(ir::Var{ir::VarKind::kFree, i}));
  }
  return MakePatternTerm(std::move(pattern));
}

absl::StatusOr<rspace::TermPtr> ReadPattern(size_t arity) {
  static const std::vector<rspace::TermPtr>* const table = [] {
    auto* t = new std::vector<rspace::TermPtr>();
    for (size_t n = 0; n < kTabledArity; ++n) t->push_back(*MakeReadPattern(n));
    return t;
  }();
  if (arity < table->size()) return (*table)[arity];
  return MakeReadPattern(arity);
}

const rspace::TermPtr& ReadContinuation() {
  static const rspace::TermPtr* const k = [] {
    ContinuationValue v;
    v.system = true;
    v.body_ref = SpaceNative::kNativeBodyRef;
    return new rspace::TermPtr(*MakeContinuationTerm(std::move(v)));
  }();
  return *k;
}

}  // namespace

absl::StatusOr<rspace::TermPtr> SpaceNative::ChannelTerm(
    const ir::ParPtr& channel) {
  if (terms_ == nullptr) return MakeChannelTerm(channel);
  if (std::optional<rspace::TermPtr> hit = terms_->Get(channel->hash)) {
    return *std::move(hit);
  }
  ASSIGN_OR_RETURN(rspace::TermPtr t, MakeChannelTerm(channel));
  return terms_->Put(channel->hash, std::move(t));
}

absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> SpaceNative::FirstDatum(
    const rspace::TermPtr& chan) {
  ASSIGN_OR_RETURN(std::vector<rspace::Datum> data,
                   space_->GetData(chan->hash(), ctx_.scope));
  if (data.empty()) return std::nullopt;
  std::shared_ptr<const StoredValue> holder;
  ASSIGN_OR_RETURN(const DataValue* first, DataOf(*data.front().value, holder));
  return first->pars;
}

absl::StatusOr<std::optional<std::vector<ir::ParPtr>>>
SpaceNative::ReadUnrecorded(const ir::ParPtr& channel) {
  RETURN_IF_ERROR(Charge(cost::kReceive));
  ASSIGN_OR_RETURN(rspace::TermPtr chan, ChannelTerm(channel));
  return FirstDatum(chan);
}

absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> SpaceNative::Read(
    const ir::ParPtr& channel, bool peek) {
  RETURN_IF_ERROR(
      Charge(cost::kReceive + cost::kEventBase + cost::kEventPerChannel));
  ASSIGN_OR_RETURN(rspace::TermPtr chan, ChannelTerm(channel));
  ASSIGN_OR_RETURN(std::optional<std::vector<ir::ParPtr>> first,
                   FirstDatum(chan));
  if (!first.has_value()) return std::nullopt;
  ASSIGN_OR_RETURN(rspace::TermPtr pat, ReadPattern(first->size()));
  const rspace::TermPtr& kt = ReadContinuation();
  ASSIGN_OR_RETURN(
      std::optional<rspace::Comm> comm,
      space_->Consume(ctx_, {chan}, {pat}, kt, /*persist=*/false, peek));
  if (!comm.has_value() || comm->binds.size() != 1) {
    // The first datum matches the pattern by construction; anything else
    // means the space changed under us (a concurrent writer).
    return absl::InternalError("native read found no datum to match");
  }
  std::shared_ptr<const StoredValue> got_holder;
  ASSIGN_OR_RETURN(const DataValue* got,
                   DataOf(*comm->binds[0].datum, got_holder));
  return got->pars;
}

absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> SpaceNative::Peek(
    const ir::ParPtr& channel) {
  return Read(channel, /*peek=*/true);
}

absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> SpaceNative::Take(
    const ir::ParPtr& channel) {
  return Read(channel, /*peek=*/false);
}

absl::Status SpaceNative::Put(const ir::ParPtr& channel,
                              std::vector<ir::ParPtr> values) {
  ASSIGN_OR_RETURN(rspace::TermPtr chan, ChannelTerm(channel));
  DataValue data;
  data.pars = std::move(values);
  ASSIGN_OR_RETURN(rspace::TermPtr datum, MakeDataTerm(std::move(data)));
  RETURN_IF_ERROR(Charge(
      cost::kSend +
      cost::kStoragePerByte *
          static_cast<int64_t>(chan->bytes().size() + datum->bytes().size()) +
      cost::kEventBase + cost::kEventPerChannel));
  ASSIGN_OR_RETURN(std::vector<rspace::Comm> comms,
                   space_->Produce(ctx_, chan, datum, /*persist=*/false));
  if (!comms.empty()) {
    return absl::FailedPreconditionError(
        "native write met a waiting continuation");
  }
  return absl::OkStatus();
}

}  // namespace rnode::rholang::interp
