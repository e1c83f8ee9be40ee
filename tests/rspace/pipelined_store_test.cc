// PipelinedStore: a flight is readable before it lands, later writes land
// after it, a failed flight is retried, and reads stay atomic per batch.
#include "rspace/storage/pipelined_store.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "rspace/storage/fault_store.h"
#include "rspace/storage/kv_store.h"
#include "tests/eventually.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::rspace {
namespace {

using ::rnode::testing::Eventually;

Bytes B(const std::string& s) { return ToBytes(s); }

// A gate calls may be held at: open, it lets them pass; closed, they wait
// in Pass until it opens.
class Gate {
 public:
  void Close() {
    MutexLock lock(&mu_);
    open_ = false;
  }
  void Open() {
    {
      MutexLock lock(&mu_);
      open_ = true;
    }
    cv_.SignalAll();
  }
  // Waits until a call is waiting at the closed gate.
  void AwaitWaiter() {
    MutexLock lock(&mu_);
    while (waiting_ == 0) cv_.Wait(&mu_);
  }
  void Pass() {
    MutexLock lock(&mu_);
    ++waiting_;
    cv_.SignalAll();
    while (!open_) cv_.Wait(&mu_);
    --waiting_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

// Forwards to an InMemoryStore, writes through the `writes` gate and scans
// through the `reads` gate. Records the first key of each write it
// applied, in order.
class GatedStore final : public KeyValueStore {
 public:
  explicit GatedStore(size_t columns) : base_(columns) {}

  Gate writes;
  Gate reads;

  std::vector<std::string> order() {
    MutexLock lock(&mu_);
    return order_;
  }

  size_t ColumnCount() const override { return base_.ColumnCount(); }
  absl::StatusOr<std::optional<Bytes>> Get(ColumnId c, ByteView k) override {
    return base_.Get(c, k);
  }
  absl::Status Write(const WriteBatch& batch) override {
    writes.Pass();
    absl::Status s = base_.Write(batch);
    MutexLock lock(&mu_);
    if (s.ok() && !batch.empty())
      order_.push_back(ToString(batch.ops()[0].key));
    return s;
  }
  absl::Status ForEach(
      ColumnId c,
      const std::function<absl::Status(ByteView, ByteView)>& fn) override {
    return base_.ForEach(c, fn);
  }
  absl::Status ScanFrom(
      ColumnId c, ByteView from,
      const std::function<bool(ByteView, ByteView)>& fn) override {
    reads.Pass();
    return base_.ScanFrom(c, from, fn);
  }

 private:
  InMemoryStore base_;
  Mutex mu_;
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);
};

// Every key and value of `column`, in scan order, as "k=v".
std::vector<std::string> Scan(KeyValueStore& store, ColumnId column,
                              const std::string& from = "",
                              size_t limit = SIZE_MAX) {
  std::vector<std::string> out;
  absl::Status s =
      store.ScanFrom(column, AsBytes(from), [&](ByteView k, ByteView v) {
        out.push_back(ToString(k) + "=" + ToString(v));
        return out.size() < limit;
      });
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

std::optional<std::string> Read(KeyValueStore& store, ColumnId column,
                                const std::string& key) {
  auto r = store.Get(column, AsBytes(key));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || !r->has_value()) return std::nullopt;
  return ToString(**r);
}

TEST(PipelinedStoreTest, AFlightReadsAsWrittenBeforeItLands) {
  GatedStore gated(2);
  {
    WriteBatch seed;
    seed.Put(0, B("a"), B("a0"));
    seed.Put(0, B("c"), B("c0"));
    seed.Put(0, B("e"), B("e0"));
    seed.Put(1, B("x"), B("x0"));
    ASSERT_TRUE(gated.Write(seed).ok());
  }
  PipelinedStore store(&gated);
  gated.writes.Close();
  WriteBatch batch;
  batch.Put(0, B("b"), B("b1"));
  batch.Put(0, B("a"), B("a1"));
  batch.Delete(0, B("c"));
  batch.Put(0, B("b"), B("b2"));  // The later op on a key wins.
  batch.Put(0, B("f"), B("f1"));
  batch.Put(0, B("g"), B("g1"));
  batch.Delete(0, B("g"));
  ASSERT_TRUE(store.WriteAsync(std::move(batch)).ok());
  gated.writes.AwaitWaiter();
  // Not in the base yet ...
  EXPECT_EQ(Read(gated, 0, "a"), "a0");
  EXPECT_EQ(Read(gated, 0, "b"), std::nullopt);
  // ... but every read of the store sees it.
  EXPECT_EQ(Read(store, 0, "a"), "a1");
  EXPECT_EQ(Read(store, 0, "b"), "b2");
  EXPECT_EQ(Read(store, 0, "c"), std::nullopt);
  EXPECT_EQ(Read(store, 0, "e"), "e0");
  EXPECT_EQ(Read(store, 0, "g"), std::nullopt);
  EXPECT_EQ(Read(store, 1, "x"), "x0");
  EXPECT_EQ(Read(store, 1, "a"), std::nullopt);  // Other column.

  std::vector<ByteView> keys = {AsBytes("e"),  AsBytes("b"), AsBytes("c"),
                                AsBytes("zz"), AsBytes("b"), AsBytes("a")};
  auto many = store.MultiGet(0, keys);
  ASSERT_TRUE(many.ok()) << many.status();
  ASSERT_EQ(many->size(), 6u);
  EXPECT_EQ(ToString(*(*many)[0]), "e0");
  EXPECT_EQ(ToString(*(*many)[1]), "b2");
  EXPECT_FALSE((*many)[2].has_value());
  EXPECT_FALSE((*many)[3].has_value());
  EXPECT_EQ(ToString(*(*many)[4]), "b2");
  EXPECT_EQ(ToString(*(*many)[5]), "a1");

  const std::vector<std::string> all = {"a=a1", "b=b2", "e=e0", "f=f1"};
  EXPECT_EQ(Scan(store, 0), all);
  EXPECT_EQ(Scan(store, 0, "b"),
            (std::vector<std::string>{"b=b2", "e=e0", "f=f1"}));
  EXPECT_EQ(Scan(store, 0, "c"), (std::vector<std::string>{"e=e0", "f=f1"}));
  EXPECT_EQ(Scan(store, 0, "e1"), (std::vector<std::string>{"f=f1"}));
  // Early stops, on a flight key and on a base key.
  EXPECT_EQ(Scan(store, 0, "", 1), (std::vector<std::string>{"a=a1"}));
  EXPECT_EQ(Scan(store, 0, "", 3),
            (std::vector<std::string>{"a=a1", "b=b2", "e=e0"}));
  EXPECT_EQ(Scan(store, 1), (std::vector<std::string>{"x=x0"}));
  std::vector<std::string> each;
  ASSERT_TRUE(store
                  .ForEach(0,
                           [&](ByteView k, ByteView v) {
                             each.push_back(ToString(k) + "=" + ToString(v));
                             return absl::OkStatus();
                           })
                  .ok());
  EXPECT_EQ(each, all);
  absl::Status stop = store.ForEach(
      0, [&](ByteView, ByteView) { return absl::CancelledError("enough"); });
  EXPECT_EQ(stop.code(), absl::StatusCode::kCancelled);

  gated.writes.Open();
  ASSERT_TRUE(store.Sync().ok());
  EXPECT_EQ(Scan(gated, 0), all);
  EXPECT_EQ(Scan(store, 0), all);
  const PipelinedStoreStats stats = store.stats();
  EXPECT_EQ(stats.async_writes, 1u);
  EXPECT_EQ(stats.failed_writes, 0u);
}

TEST(PipelinedStoreTest, LaterWritesLandAfterTheFlight) {
  GatedStore gated(1);
  PipelinedStore store(&gated);
  gated.writes.Close();
  WriteBatch first;
  first.Put(0, B("first"), B("1"));
  ASSERT_TRUE(store.WriteAsync(std::move(first)).ok());
  gated.writes.AwaitWaiter();
  std::atomic<bool> second_done{false};
  std::thread writer([&] {
    WriteBatch second;
    second.Put(0, B("second"), B("2"));
    EXPECT_TRUE(store.Write(second).ok());
    second_done = true;
  });
  // The second write waits for the first, which the gate holds.
  ASSERT_TRUE(Eventually([&] { return store.stats().flight_waits == 1; }));
  EXPECT_FALSE(second_done.load());
  EXPECT_EQ(gated.order(), std::vector<std::string>{});
  gated.writes.Open();
  writer.join();
  EXPECT_EQ(gated.order(), (std::vector<std::string>{"first", "second"}));
  // A second flight waits for the first as well.
  WriteBatch third, fourth;
  third.Put(0, B("third"), B("3"));
  fourth.Put(0, B("fourth"), B("4"));
  ASSERT_TRUE(store.WriteAsync(std::move(third)).ok());
  ASSERT_TRUE(store.WriteAsync(std::move(fourth)).ok());
  ASSERT_TRUE(store.Sync().ok());
  EXPECT_EQ(gated.order(),
            (std::vector<std::string>{"first", "second", "third", "fourth"}));
  EXPECT_EQ(store.stats().async_writes, 3u);
}

// A scan that holds a flight which then lands keeps the next batch out of
// the base until it ends: it never shows that batch's keys beside the
// flight's older values.
TEST(PipelinedStoreTest, AScanNeverMixesALandedFlightWithTheNextBatch) {
  GatedStore gated(1);
  PipelinedStore store(&gated);
  gated.writes.Close();
  WriteBatch first;
  first.Put(0, B("a"), B("1"));
  first.Put(0, B("b"), B("1"));
  ASSERT_TRUE(store.WriteAsync(std::move(first)).ok());
  gated.writes.AwaitWaiter();
  gated.reads.Close();
  std::vector<std::string> scanned;
  std::thread reader([&] { scanned = Scan(store, 0); });
  gated.reads.AwaitWaiter();  // The scan holds the flight.
  gated.writes.Open();        // The flight lands.
  std::atomic<bool> second_done{false};
  std::thread writer([&] {
    WriteBatch second;
    second.Put(0, B("a"), B("2"));
    second.Put(0, B("c"), B("2"));
    EXPECT_TRUE(store.Write(second).ok());
    second_done = true;
  });
  // The write waits for the scan, which the read gate holds.
  ASSERT_TRUE(Eventually([&] { return store.stats().reader_waits == 1; }));
  EXPECT_FALSE(second_done.load());
  EXPECT_EQ(gated.order(), std::vector<std::string>{"a"});
  gated.reads.Open();
  reader.join();
  writer.join();
  EXPECT_EQ(scanned, (std::vector<std::string>{"a=1", "b=1"}));
  EXPECT_EQ(Scan(store, 0), (std::vector<std::string>{"a=2", "b=1", "c=2"}));
}

TEST(PipelinedStoreTest, AFailedFlightStaysReadableAndIsRetried) {
  InMemoryStore base(1);
  FaultInjectingStore faulty(&base);
  PipelinedStore store(&faulty);
  faulty.FailWritesAfter(0);
  WriteBatch a;
  a.Put(0, B("a"), B("1"));
  ASSERT_TRUE(store.WriteAsync(std::move(a)).ok());
  // Sync retries once and reports the fault; the flight stays readable.
  EXPECT_EQ(store.Sync().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Read(store, 0, "a"), "1");
  EXPECT_EQ(Read(base, 0, "a"), std::nullopt);
  // A later write is refused while the flight cannot land: nothing new.
  WriteBatch b;
  b.Put(0, B("b"), B("2"));
  EXPECT_EQ(store.Write(b).code(), absl::StatusCode::kUnavailable);
  WriteBatch c;
  c.Put(0, B("c"), B("3"));
  EXPECT_EQ(store.WriteAsync(std::move(c)).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(Read(store, 0, "b"), std::nullopt);
  EXPECT_EQ(Read(store, 0, "c"), std::nullopt);
  EXPECT_EQ(Scan(store, 0), std::vector<std::string>{"a=1"});
  // Once the store heals, the next write lands the flight first.
  faulty.Heal();
  ASSERT_TRUE(store.Write(b).ok());
  EXPECT_EQ(Scan(base, 0), (std::vector<std::string>{"a=1", "b=2"}));
  EXPECT_EQ(store.stats().failed_writes, 4u);
}

TEST(PipelinedStoreTest, NoSpaceStaysNoSpaceUntilSpaceReturns) {
  // A base whose writes fail as a full disk's do.
  class FullStore final : public KeyValueStore {
   public:
    explicit FullStore(KeyValueStore* base) : base_(base) {}
    std::atomic<bool> full{true};
    size_t ColumnCount() const override { return base_->ColumnCount(); }
    absl::StatusOr<std::optional<Bytes>> Get(ColumnId c, ByteView k) override {
      return base_->Get(c, k);
    }
    absl::Status Write(const WriteBatch& batch) override {
      if (full) return NoSpaceError("disk full");
      return base_->Write(batch);
    }
    absl::Status ForEach(
        ColumnId c,
        const std::function<absl::Status(ByteView, ByteView)>& fn) override {
      return base_->ForEach(c, fn);
    }

   private:
    KeyValueStore* base_;
  };
  InMemoryStore base(1);
  FullStore full(&base);
  PipelinedStore store(&full);
  WriteBatch a;
  a.Put(0, B("a"), B("1"));
  ASSERT_TRUE(store.WriteAsync(std::move(a)).ok());
  absl::Status s = store.Sync();
  EXPECT_TRUE(IsNoSpace(s)) << s;
  full.full = false;
  EXPECT_TRUE(store.Sync().ok());
  EXPECT_EQ(Read(base, 0, "a"), "1");
}

TEST(PipelinedStoreTest, AnUnknownColumnIsRefusedAndNothingTaken) {
  InMemoryStore base(2);
  PipelinedStore store(&base);
  WriteBatch batch;
  batch.Put(0, B("a"), B("1"));
  batch.Put(2, B("b"), B("2"));
  EXPECT_EQ(store.WriteAsync(std::move(batch)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Read(store, 0, "a"), std::nullopt);
  EXPECT_TRUE(store.Sync().ok());
  EXPECT_EQ(Read(base, 0, "a"), std::nullopt);
  EXPECT_EQ(store.stats().async_writes, 0u);
  // An empty batch is accepted and is not a flight.
  EXPECT_TRUE(store.WriteAsync(WriteBatch()).ok());
  EXPECT_EQ(store.stats().async_writes, 0u);
}

TEST(PipelinedStoreTest, DestructionLandsTheFlightAndNeverHangs) {
  InMemoryStore base(1);
  FaultInjectingStore faulty(&base);
  {
    PipelinedStore store(&faulty);
    WriteBatch a;
    a.Put(0, B("a"), B("1"));
    ASSERT_TRUE(store.WriteAsync(std::move(a)).ok());
  }
  EXPECT_EQ(Read(base, 0, "a"), "1");
  {
    // Failed in the background, healed before the end: landed by the
    // destructor's retry.
    PipelinedStore store(&faulty);
    faulty.FailWritesAfter(0);
    WriteBatch b;
    b.Put(0, B("b"), B("2"));
    ASSERT_TRUE(store.WriteAsync(std::move(b)).ok());
    EXPECT_EQ(store.Sync().code(), absl::StatusCode::kUnavailable);
    faulty.Heal();
  }
  EXPECT_EQ(Read(base, 0, "b"), "2");
  {
    // Still failing at the end: lost, as an unreturned write would be.
    PipelinedStore store(&faulty);
    faulty.FailWritesAfter(0);
    WriteBatch c;
    c.Put(0, B("c"), B("3"));
    ASSERT_TRUE(store.WriteAsync(std::move(c)).ok());
  }
  faulty.Heal();
  EXPECT_EQ(Read(base, 0, "c"), std::nullopt);
}

// Writers alternate flights and direct writes of one version to every key;
// readers check that a MultiGet and a scan never mix versions and that a
// reader never sees a version go back.
TEST(PipelinedStoreTest, ConcurrentReadsAreAtomicPerBatch) {
  constexpr int kKeys = 8;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  constexpr int kVersions = 300;
#else
  constexpr int kVersions = 3000;
#endif
  InMemoryStore base(2);
  PipelinedStore store(&base);
  auto key = [](int i) { return "k" + std::to_string(i); };
  auto batch_of = [&](int v) {
    WriteBatch b;
    for (int i = 0; i < kKeys; ++i) {
      b.Put(0, AsBytes(key(i)), AsBytes(std::to_string(v)));
    }
    return b;
  };
  ASSERT_TRUE(store.Write(batch_of(0)).ok());
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  auto reader = [&](int which) {
    int last = 0;
    std::vector<std::string> names;
    for (int i = 0; i < kKeys; ++i) names.push_back(key(i));
    std::vector<ByteView> keys;
    for (const std::string& n : names) keys.push_back(AsBytes(n));
    while (!done.load()) {
      std::vector<int> seen;
      if (which == 0) {
        auto r = store.MultiGet(0, keys);
        if (!r.ok()) {
          ++failures;
          continue;
        }
        for (const auto& v : *r) seen.push_back(std::stoi(ToString(*v)));
      } else if (which == 1) {
        absl::Status s =
            store.ScanFrom(0, ByteView(), [&](ByteView, ByteView v) {
              seen.push_back(std::stoi(ToString(v)));
              return true;
            });
        if (!s.ok()) ++failures;
      } else {
        auto r = store.Get(0, AsBytes(key(3)));
        if (!r.ok() || !r->has_value()) {
          ++failures;
          continue;
        }
        seen.push_back(std::stoi(ToString(**r)));
      }
      if (seen.empty() || (which != 2 && seen.size() != kKeys)) {
        ++failures;
        continue;
      }
      for (int v : seen) {
        if (v != seen[0]) ++failures;
      }
      if (seen[0] < last) ++failures;
      last = seen[0];
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) readers.emplace_back(reader, r);
  for (int v = 1; v <= kVersions; ++v) {
    absl::Status s =
        v % 3 == 0 ? store.Write(batch_of(v)) : store.WriteAsync(batch_of(v));
    ASSERT_TRUE(s.ok()) << s;
  }
  ASSERT_TRUE(store.Sync().ok());
  done = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Read(base, 0, key(0)), std::to_string(kVersions));
}

}  // namespace
}  // namespace rnode::rspace
