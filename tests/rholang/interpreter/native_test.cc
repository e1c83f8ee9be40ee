// Native objects (sends served by C++ handlers for any arity) and
// SpaceNative (native contracts' recorded and unrecorded space access).
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/printer.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/system_processes.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp {
namespace {

constexpr size_t kStoreColumns = 3;
constexpr uint8_t kEchoKind = 9;

using Lines = CollectingSink;

// An object that replies (key, number of arguments) on its last argument.
std::vector<NativeObjectDef> EchoObjects() {
  std::vector<NativeObjectDef> v;
  v.push_back(NativeObjectDef{
      kEchoKind, "echo",
      [](ByteView key, std::span<const ir::ParPtr> args,
         ProcessContext& ctx) -> absl::StatusOr<std::vector<Reply>> {
        RETURN_IF_ERROR(Charge(ctx, 5));
        if (args.empty()) return absl::InvalidArgumentError("echo: no reply");
        return ReplyWith(args.back(),
                         {StringPar(std::string(key.begin(), key.end())),
                          IntPar(static_cast<int64_t>(args.size()))});
      }});
  return v;
}

ir::ParPtr WriteOnly(const ir::ParPtr& p) {
  return ir::ParBuilder()
      .Add(ir::Bundle::Make(p, /*write_flag=*/true, /*read_flag=*/false))
      .Build();
}

DeployInfo Deploy() {
  DeployInfo d;
  d.timestamp = 1;
  d.deployer_public_key = Bytes(65, 4);
  d.deploy_id = Bytes(64, 7);
  return d;
}

struct World {
  rspace::InMemoryStore store{kStoreColumns};
  std::unique_ptr<rspace::Space> space;
  std::vector<NativeObjectDef> objects = EchoObjects();
  Lines lines;
  std::unique_ptr<Runtime> rt;

  explicit World(int threads = 1, bool with_objects = true) {
    rspace::SpaceOptions so;
    so.term_factory = StoredTermFactory();
    space = *rspace::Space::Open(&store, so);
    RuntimeOptions o;
    o.threads = threads;
    o.output = &lines;
    if (with_objects) o.objects = &objects;
    rt = *Runtime::Create(space.get(), o);
  }

  // Puts bundle+{echo object "key"} on the public channel @"obj".
  void PublishObject(std::string_view key) {
    rspace::EventLog log;
    SpaceNative native(space.get(), rspace::OpContext{&log, &rt->matcher()},
                       nullptr);
    ASSERT_TRUE(native
                    .Put(ir::ParOf(ir::Expr::String("obj")),
                         {WriteOnly(ObjectName(kEchoKind, AsBytes(key)))})
                    .ok());
  }

  EvalResult Run(const std::string& src, rspace::EventLog* log) {
    return rt->EvaluateSource(src, Deploy(), 1'000'000, log);
  }
};

constexpr char kCallEcho[] = R"(
new stdout(`rho:io:stdout`), r in {
  for (@o <- @"obj") {
    @o!(1, 2, *r) | @o!(*r) |
    for (@k, @n <- r; @k2, @n2 <- r) { stdout!([[k, n], [k2, n2]]) }
  }
})";

TEST(ObjectNameTest, RoundTripsAndNeverLooksLikeANewName) {
  uint8_t kind = 0;
  ByteView key;
  ir::ParPtr name = ObjectName(4, AsBytes("abc"));
  ASSERT_TRUE(AsObjectName(*name, kind, key));
  EXPECT_EQ(kind, 4);
  EXPECT_EQ(std::string(key.begin(), key.end()), "abc");
  // A key that would make a 32-byte id is padded to 33.
  std::string thirty(30, 'k');
  ir::ParPtr padded = ObjectName(1, AsBytes(thirty));
  ASSERT_TRUE(AsObjectName(*padded, kind, key));
  EXPECT_EQ(key.size(), 31u);
  EXPECT_EQ(padded->unforgeables[0]->id.size(), 33u);
  // A 32-byte id starting with the tag is not an object (ids from `new`).
  Bytes id(32, 0xFE);
  EXPECT_FALSE(AsObjectName(*UnforgeablePar(ir::UnforgeableKind::kPrivate, id),
                            kind, key));
  EXPECT_FALSE(AsObjectName(*FixedChannel(3), kind, key));
}

TEST(NativeObjectTest, SendsAreServedForAnyArityWithTheKey) {
  World w;
  w.PublishObject("k1");
  rspace::EventLog log;
  EvalResult r = w.Run(kCallEcho, &log);
  ASSERT_TRUE(r.error.ok()) << r.error;
  ASSERT_EQ(w.lines.out.size(), 1u);
  // Which reply meets which bind is the scheduler's deterministic choice.
  EXPECT_TRUE(w.lines.out[0] == "[[\"k1\", 3], [\"k1\", 1]]" ||
              w.lines.out[0] == "[[\"k1\", 1], [\"k1\", 3]]")
      << w.lines.out[0];
}

TEST(NativeObjectTest, SameOutcomeOnAnyThreadCountAndInReplay) {
  std::vector<std::string> outputs;
  std::vector<int64_t> costs;
  std::vector<rspace::Event> recorded;
  for (int threads : {1, 4}) {
    World w(threads);
    w.PublishObject("k");
    rspace::EventLog log;
    EvalResult r = w.Run(kCallEcho, &log);
    ASSERT_TRUE(r.error.ok()) << r.error;
    outputs.push_back(w.lines.out.at(0));
    costs.push_back(r.cost);
    recorded = log.Take();
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(costs[0], costs[1]);
  World replay;
  replay.PublishObject("k");
  auto log = rspace::EventLog::ForReplay(recorded);
  ASSERT_TRUE(log.ok());
  EvalResult r = replay.Run(kCallEcho, log->get());
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(replay.lines.out.at(0), outputs[0]);
}

TEST(NativeObjectTest, PersistentSendIsAnError) {
  World w;
  w.PublishObject("k");
  rspace::EventLog log;
  EvalResult r = w.Run(R"(for (@o <- @"obj") { @o!!(1) })", &log);
  EXPECT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(r.error.message()).find("native echo"),
            std::string::npos)
      << r.error;
}

TEST(NativeObjectTest, WithoutTheKindASendIsAnOrdinaryDatum) {
  World w(1, /*with_objects=*/false);
  w.PublishObject("k");
  rspace::EventLog log;
  EvalResult r = w.Run(kCallEcho, &log);
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_TRUE(w.lines.out.empty());
}

// SpaceNative.

struct NativeFixture {
  World w;
  rspace::EventLog log;
  PhloMeter meter{1'000'000};
  SpaceNative native{w.space.get(), rspace::OpContext{&log, &w.rt->matcher()},
                     &meter};
  ir::ParPtr chan =
      UnforgeablePar(ir::UnforgeableKind::kPrivate, Bytes(32, 0x42));
};

size_t CommCount(const std::vector<rspace::Event>& events) {
  size_t n = 0;
  for (const auto& e : events)
    n += std::holds_alternative<rspace::CommEvent>(e);
  return n;
}

TEST(SpaceNativeTest, PutPeekTakeAreRecordedAndReadUnrecordedIsNot) {
  NativeFixture f;
  ASSERT_TRUE(f.native.Put(f.chan, {IntPar(5)}).ok());
  auto unrecorded = f.native.ReadUnrecorded(f.chan);
  ASSERT_TRUE(unrecorded.ok() && unrecorded->has_value());
  EXPECT_EQ(*Print(*(**unrecorded)[0]), "5");
  EXPECT_EQ(f.log.size(), 1u);  // the produce only
  auto peeked = f.native.Peek(f.chan);
  ASSERT_TRUE(peeked.ok() && peeked->has_value());
  auto taken = f.native.Take(f.chan);
  ASSERT_TRUE(taken.ok() && taken->has_value());
  EXPECT_EQ(*Print(*(**taken)[0]), "5");
  auto empty = f.native.Take(f.chan);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());
  std::vector<rspace::Event> events = f.log.Take();
  EXPECT_EQ(CommCount(events), 2u);  // the peek and the take
}

TEST(SpaceNativeTest, ChargesTheDocumentedCosts) {
  NativeFixture f;
  ASSERT_TRUE(f.native.ReadUnrecorded(f.chan).ok());
  EXPECT_EQ(f.meter.spent(), cost::kReceive);
  ASSERT_TRUE(f.native.Peek(f.chan).ok());
  EXPECT_EQ(f.meter.spent(),
            2 * cost::kReceive + cost::kEventBase + cost::kEventPerChannel);
}

TEST(SpaceNativeTest, PutMeetingAWaitingContinuationFails) {
  World w;
  // A program waits on @"wait"; a native Put there must not feed it.
  rspace::EventLog log;
  ASSERT_TRUE(w.Run(R"(for (_ <- @"wait") { Nil })", &log).error.ok());
  SpaceNative native(w.space.get(), rspace::OpContext{&log, &w.rt->matcher()},
                     nullptr);
  absl::Status s = native.Put(ir::ParOf(ir::Expr::String("wait")), {IntPar(1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SpaceNativeTest, RecordedOperationsReplay) {
  std::vector<rspace::Event> recorded;
  {
    NativeFixture f;
    ASSERT_TRUE(f.native.Put(f.chan, {IntPar(5)}).ok());
    ASSERT_TRUE(f.native.Take(f.chan).ok());
    ASSERT_TRUE(f.native.Put(f.chan, {IntPar(6)}).ok());
    recorded = f.log.Take();
  }
  World w;
  auto log = rspace::EventLog::ForReplay(recorded);
  ASSERT_TRUE(log.ok());
  SpaceNative native(w.space.get(),
                     rspace::OpContext{log->get(), &w.rt->matcher()}, nullptr);
  ASSERT_TRUE(native
                  .Put(ir::ParPtr(UnforgeablePar(ir::UnforgeableKind::kPrivate,
                                                 Bytes(32, 0x42))),
                       {IntPar(5)})
                  .ok());
  ASSERT_TRUE(
      native
          .Take(UnforgeablePar(ir::UnforgeableKind::kPrivate, Bytes(32, 0x42)))
          .ok());
  // A different value than recorded diverges.
  EXPECT_FALSE(
      native
          .Put(UnforgeablePar(ir::UnforgeableKind::kPrivate, Bytes(32, 0x42)),
               {IntPar(7)})
          .ok());
}

}  // namespace
}  // namespace rnode::rholang::interp
