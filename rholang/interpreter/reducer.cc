// The round-based reducer and the runtime (scheduling in reducer.h).
#include "rholang/interpreter/reducer.h"

#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "crypto/rng.h"
#include "rholang/frontend/matcher.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/interpreter/eval_expr.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/interpreter/substitute.h"
#include "util/status_macros.h"
#include "util/worker_pool.h"

namespace rnode::rholang::interp {
namespace {

// total += amount (amount >= 0), saturating at INT64_MAX: an unlimited
// deploy's spent phlo is summed without overflow.
void AddSaturating(int64_t& total, int64_t amount) {
  total = amount > std::numeric_limits<int64_t>::max() - total
              ? std::numeric_limits<int64_t>::max()
              : total + amount;
}

using crypto::SplittableRng;
using rspace::TermPtr;

struct Task;

struct ProduceOp {
  TermPtr channel;
  TermPtr data;
  bool persist = false;
};

struct ConsumeOp {
  std::vector<TermPtr> channels;
  std::vector<TermPtr> patterns;
  TermPtr continuation;
  bool persist = false;
  bool peek = false;
};

struct SpawnOp {
  ir::ParPtr par;
  Env env;
  SplittableRng rng;
};

// A send on a native object name (system_processes.h): served by the
// object's handler in the sequential phase.
struct CallOp {
  const NativeObjectDef* object = nullptr;
  Bytes key;
  std::vector<ir::ParPtr> args;
  std::optional<SplittableRng> rng;
};

using Effect = std::variant<ProduceOp, ConsumeOp, SpawnOp, CallOp>;

// A unit of the next round: a Par to evaluate, or a ready space operation.
struct Task {
  ir::ParPtr par;  // null for an operation task
  Env env;
  std::optional<SplittableRng> rng;
  std::optional<Effect> op;
};

struct TaskResult {
  std::vector<Effect> effects;
  int64_t spent = 0;
  absl::Status status;
};

int64_t EventCost(size_t channels) {
  return cost::kEventBase +
         cost::kEventPerChannel * static_cast<int64_t>(channels);
}

bool IsRunnableExpr(const ir::Expr& e) {
  return (e.kind == ir::ExprKind::kVar && e.var.kind == ir::VarKind::kBound) ||
         e.kind == ir::ExprKind::kMethod;
}

// The single bundle a channel Par consists of, or null.
const ir::Bundle* SingleBundle(const ir::Par& p) {
  if (p.bundles.size() == 1 && p.ComponentCount() == 1) {
    return p.bundles[0].get();
  }
  return nullptr;
}

ir::ParPtr Wrap(const auto& component) {
  ir::ParBuilder b;
  b.Add(component);
  return b.Build();
}

// Evaluates one task into effects; pure with respect to the space.
class Evaluator {
 public:
  Evaluator(const std::vector<SystemProcessDef>& table,
            const std::vector<NativeObjectDef>* objects, PhloMeter& meter,
            std::vector<Effect>& effects)
      : table_(table), objects_(objects), meter_(meter), effects_(effects) {
    ctx_.meter = &meter_;
  }

  absl::Status Proc(const ir::ParPtr& par, const Env& env, SplittableRng rng,
                    int depth) {
    if (depth > kMaxInlineDepth) {
      effects_.push_back(SpawnOp{par, env, rng});
      return absl::OkStatus();
    }
    const ir::Par& p = *par;
    size_t n = p.sends.size() + p.receives.size() + p.news.size() +
               p.matches.size() + p.conditionals.size() + p.bundles.size();
    for (const auto& e : p.exprs) n += IsRunnableExpr(*e) ? 1 : 0;
    if (n == 0) return absl::OkStatus();
    if (n == 1) {
      if (!p.sends.empty()) return Send(*p.sends[0], env, rng);
      if (!p.receives.empty()) return Receive(*p.receives[0], env, rng);
      if (!p.news.empty()) return New(*p.news[0], env, rng, depth);
      if (!p.matches.empty()) return Match(*p.matches[0], env, rng, depth);
      if (!p.conditionals.empty()) {
        return If(*p.conditionals[0], env, rng, depth);
      }
      if (!p.bundles.empty())
        return Proc(p.bundles[0]->body, env, rng, depth + 1);
      for (const auto& e : p.exprs) {
        if (IsRunnableExpr(*e)) return RunExpr(e, env, rng, depth);
      }
      return absl::OkStatus();
    }
    uint64_t i = 0;
    auto spawn = [&](ir::ParPtr part) {
      effects_.push_back(SpawnOp{std::move(part), env, rng.Split(i++)});
    };
    for (const auto& x : p.sends) spawn(Wrap(x));
    for (const auto& x : p.receives) spawn(Wrap(x));
    for (const auto& x : p.news) spawn(Wrap(x));
    for (const auto& x : p.matches) spawn(Wrap(x));
    for (const auto& x : p.conditionals) spawn(Wrap(x));
    for (const auto& x : p.bundles) spawn(Wrap(x));
    for (const auto& x : p.exprs) {
      if (IsRunnableExpr(*x)) spawn(Wrap(x));
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<ir::ParPtr> Value(const ir::ParPtr& term, const Env& env) {
    ASSIGN_OR_RETURN(ir::ParPtr s, Substitute(term, env, 0, meter_));
    return EvalPar(s, ctx_);
  }

  absl::Status Send(const ir::Send& s, const Env& env,
                    const SplittableRng& rng) {
    RETURN_IF_ERROR(meter_.Charge(cost::kSend));
    ASSIGN_OR_RETURN(ir::ParPtr chan, Value(s.chan, env));
    if (const ir::Bundle* b = SingleBundle(*chan)) {
      if (!b->write_flag) {
        return absl::InvalidArgumentError(
            "trying to send on a non-writeable channel (a read-only bundle)");
      }
      chan = b->body;
    }
    if (const NativeObjectDef* object = ObjectFor(*chan)) {
      return Call(*object, *chan, s, env, rng);
    }
    DataValue data;
    data.pars.reserve(s.data.size());
    for (const auto& d : s.data) {
      ASSIGN_OR_RETURN(ir::ParPtr v, Value(d, env));
      data.pars.push_back(std::move(v));
    }
    data.rng = StoredRng::Of(rng);
    ASSIGN_OR_RETURN(TermPtr chan_term, MakeChannelTerm(chan));
    ASSIGN_OR_RETURN(TermPtr data_term, MakeDataTerm(std::move(data)));
    RETURN_IF_ERROR(
        meter_.Charge(cost::kStoragePerByte *
                          static_cast<int64_t>(chan_term->bytes().size() +
                                               data_term->bytes().size()) +
                      EventCost(1)));
    effects_.push_back(
        ProduceOp{std::move(chan_term), std::move(data_term), s.persistent});
    return absl::OkStatus();
  }

  // The native object `chan` names, if its kind is served here.
  const NativeObjectDef* ObjectFor(const ir::Par& chan) const {
    if (objects_ == nullptr || chan.unforgeables.empty()) return nullptr;
    uint8_t kind = 0;
    ByteView key;
    if (!AsObjectName(chan, kind, key)) return nullptr;
    for (const NativeObjectDef& d : *objects_) {
      if (d.kind == kind) return &d;
    }
    return nullptr;
  }

  // A send to a native object: charged like a send's event, dispatched in
  // the sequential phase.
  absl::Status Call(const NativeObjectDef& object, const ir::Par& chan,
                    const ir::Send& s, const Env& env,
                    const SplittableRng& rng) {
    if (s.persistent) {
      return absl::InvalidArgumentError("persistent send to the native " +
                                        object.name + " contract");
    }
    RETURN_IF_ERROR(meter_.Charge(EventCost(1)));
    CallOp op;
    op.object = &object;
    uint8_t kind = 0;
    ByteView key;
    AsObjectName(chan, kind, key);
    op.key.assign(key.begin(), key.end());
    op.args.reserve(s.data.size());
    for (const auto& d : s.data) {
      ASSIGN_OR_RETURN(ir::ParPtr v, Value(d, env));
      op.args.push_back(std::move(v));
    }
    op.rng = rng;
    effects_.push_back(std::move(op));
    return absl::OkStatus();
  }

  absl::Status Receive(const ir::Receive& r, const Env& env,
                       const SplittableRng& rng) {
    RETURN_IF_ERROR(meter_.Charge(cost::kReceive));
    ConsumeOp op;
    op.persist = r.persistent;
    op.peek = r.peek;
    size_t bytes = 0;
    for (const ir::ReceiveBind& bind : r.binds) {
      ASSIGN_OR_RETURN(ir::ParPtr src, Value(bind.source, env));
      if (const ir::Bundle* b = SingleBundle(*src)) {
        if (!b->read_flag) {
          return absl::InvalidArgumentError(
              "trying to receive on a non-readable channel (a write-only "
              "bundle)");
        }
        src = b->body;
      }
      BindPattern pat;
      pat.remainder = bind.remainder;
      pat.free_count = bind.free_count;
      for (const auto& p : bind.patterns) {
        ASSIGN_OR_RETURN(ir::ParPtr sp, SubstitutePattern(p, env, meter_));
        pat.patterns.push_back(std::move(sp));
      }
      ASSIGN_OR_RETURN(TermPtr ct, MakeChannelTerm(src));
      ASSIGN_OR_RETURN(TermPtr pt, MakePatternTerm(std::move(pat)));
      bytes += ct->bytes().size() + pt->bytes().size();
      op.channels.push_back(std::move(ct));
      op.patterns.push_back(std::move(pt));
    }
    ContinuationValue k;
    ASSIGN_OR_RETURN(k.body, Substitute(r.body, env, r.bind_count, meter_));
    k.rng = StoredRng::Of(rng);
    ASSIGN_OR_RETURN(op.continuation, MakeContinuationTerm(std::move(k)));
    bytes += op.continuation->bytes().size();
    RETURN_IF_ERROR(
        meter_.Charge(cost::kStoragePerByte * static_cast<int64_t>(bytes) +
                      EventCost(op.channels.size())));
    effects_.push_back(std::move(op));
    return absl::OkStatus();
  }

  absl::Status New(const ir::New& n, const Env& env, SplittableRng rng,
                   int depth) {
    RETURN_IF_ERROR(
        meter_.Charge(cost::kNewBase +
                      cost::kNewPerName * static_cast<int64_t>(n.bind_count)));
    if (n.uris.size() > n.bind_count) {
      return absl::InternalError("new: more URIs than names");
    }
    const size_t plain = n.bind_count - n.uris.size();
    std::vector<ir::ParPtr> names;
    names.reserve(n.bind_count);
    for (size_t i = 0; i < plain; ++i) {
      Hash32 id = rng.Next();
      names.push_back(
          Wrap(ir::Unforgeable::Make(ir::UnforgeableKind::kPrivate, id)));
    }
    for (const std::string& uri : n.uris) {
      if (std::optional<std::string_view> why = UnservedUriReason(uri)) {
        return absl::InvalidArgumentError("`" + uri +
                                          "` in new is not served by this "
                                          "node: " +
                                          std::string(*why));
      }
      std::optional<ir::ParPtr> v = SystemUriValue(uri, table_);
      if (!v.has_value()) {
        for (const auto& [key, value] : n.injections) {
          if (key == uri) {
            v = value;
            break;
          }
        }
      }
      if (!v.has_value()) {
        return absl::InvalidArgumentError("unknown URI `" + uri + "` in new");
      }
      names.push_back(*std::move(v));
    }
    return Proc(n.body, env.Extended(names), rng, depth + 1);
  }

  absl::Status Match(const ir::Match& m, const Env& env,
                     const SplittableRng& rng, int depth) {
    RETURN_IF_ERROR(meter_.Charge(cost::kMatch));
    ASSIGN_OR_RETURN(ir::ParPtr target, Value(m.target, env));
    for (const ir::MatchCase& c : m.cases) {
      ASSIGN_OR_RETURN(ir::ParPtr pat,
                       SubstitutePattern(c.pattern, env, meter_));
      ASSIGN_OR_RETURN(std::optional<Bindings> b,
                       SpatialMatch(*target, *pat, c.free_count));
      if (!b.has_value()) continue;
      std::vector<ir::ParPtr> captures(c.free_count, ir::Nil());
      for (size_t i = 0; i < b->size() && i < captures.size(); ++i) {
        if ((*b)[i] != nullptr) captures[i] = (*b)[i];
      }
      return Proc(c.body, env.Extended(captures), rng, depth + 1);
    }
    return absl::OkStatus();
  }

  absl::Status If(const ir::If& i, const Env& env, const SplittableRng& rng,
                  int depth) {
    RETURN_IF_ERROR(meter_.Charge(cost::kIf));
    ASSIGN_OR_RETURN(ir::ParPtr cond, Substitute(i.condition, env, 0, meter_));
    ASSIGN_OR_RETURN(bool v, EvalBool(cond, ctx_));
    return Proc(v ? i.if_true : i.if_false, env, rng, depth + 1);
  }

  // A top-level variable or method call: its value runs as a process
  // (expressions in the value are already values and are dropped).
  absl::Status RunExpr(const ir::ExprPtr& e, const Env& env,
                       const SplittableRng& rng, int depth) {
    if (e->kind == ir::ExprKind::kVar) {
      RETURN_IF_ERROR(meter_.Charge(cost::kVarEval));
    }
    ASSIGN_OR_RETURN(ir::ParPtr v, Value(ir::ParOf(e), env));
    ir::ParBuilder b;
    for (const auto& x : v->sends) b.Add(x);
    for (const auto& x : v->receives) b.Add(x);
    for (const auto& x : v->news) b.Add(x);
    for (const auto& x : v->matches) b.Add(x);
    for (const auto& x : v->conditionals) b.Add(x);
    for (const auto& x : v->bundles) b.Add(x);
    return Proc(b.Build(), Env(), rng, depth + 1);
  }

  const std::vector<SystemProcessDef>& table_;
  const std::vector<NativeObjectDef>* objects_;
  PhloMeter& meter_;
  std::vector<Effect>& effects_;
  ExprContext ctx_;
};

TaskResult RunTask(const Task& task, int64_t budget,
                   const std::vector<SystemProcessDef>& table,
                   const std::vector<NativeObjectDef>* objects) {
  TaskResult out;
  if (task.op.has_value()) {
    out.effects.push_back(*task.op);
    return out;
  }
  PhloMeter meter(budget);
  try {
    Evaluator ev(table, objects, meter, out.effects);
    out.status = ev.Proc(task.par, task.env, *task.rng, 0);
  } catch (const std::exception& e) {
    out.status = absl::InternalError(std::string("evaluation: ") + e.what());
  } catch (...) {
    out.status = absl::InternalError("evaluation: unknown exception");
  }
  out.spent = meter.spent();
  return out;
}

}  // namespace

// The scheduler of one runtime: rounds, the sequential phase's space
// operations and COMM dispatch. Not thread-safe (one deploy at a time); only
// RunTask runs on the worker pool.
class Runtime::Impl {
 public:
  Impl(Runtime& rt, int threads, WorkerPool* shared) : rt_(rt), pool_(shared) {
    if (pool_ == nullptr && threads > 1) {
      owned_pool_ = std::make_unique<WorkerPool>(threads);
      pool_ = owned_pool_.get();
    }
    if (pool_ != nullptr && pool_->threads() < 2) pool_ = nullptr;
  }

  const std::vector<SystemProcessDef>& table() const {
    return rt_.options_.processes != nullptr ? *rt_.options_.processes
                                             : StandardSystemProcesses();
  }

  const SystemProcessDef* ByBodyRef(uint32_t ref) const {
    for (const auto& d : table()) {
      if (d.body_ref == ref && d.handler) return &d;
    }
    return nullptr;
  }

  // Runs the deploy's rounds; `total` accumulates the phlo spent.
  absl::Status Run(const ir::ParPtr& program, const DeployInfo& deploy,
                   const BlockInfo* block, int64_t limit, rspace::EventLog* log,
                   rspace::DeployScope* scope, int64_t& total, size_t& rounds,
                   size_t& parallel_rounds) {
    deploy_ = &deploy;
    block_ = block;
    ctx_ = rspace::OpContext{log, &rt_.matcher_, scope};
    std::vector<Task> current;
    Task first;
    first.par = program;
    first.rng = SplittableRng::FromSeed(deploy.deploy_id);
    current.push_back(std::move(first));
    while (!current.empty()) {
      if (++rounds > kMaxRounds) {
        return absl::ResourceExhaustedError("deploy exceeded the round limit");
      }
      const int64_t budget =
          limit < 0 ? -1 : std::max<int64_t>(limit - total, 0);
      std::vector<TaskResult> results(current.size());
      const auto& tbl = table();
      auto body = [&](size_t i) {
        results[i] = RunTask(current[i], budget, tbl, rt_.options_.objects);
      };
      if (pool_ != nullptr &&
          current.size() >= rt_.options_.min_parallel_tasks) {
        ++parallel_rounds;
        pool_->ParallelFor(current.size(), body);
      } else {
        for (size_t i = 0; i < current.size(); ++i) body(i);
      }
      for (const TaskResult& r : results) AddSaturating(total, r.spent);
      if (limit >= 0 && total > limit) return OutOfPhloError();
      for (const TaskResult& r : results) {
        if (!r.status.ok()) return r.status;
      }
      std::vector<Task> next;
      for (TaskResult& r : results) {
        for (Effect& e : r.effects) {
          RETURN_IF_ERROR(Apply(std::move(e), limit, total, next));
        }
      }
      if (next.size() > kMaxTasksPerRound) {
        return absl::ResourceExhaustedError(
            "deploy exceeded the task limit of one round");
      }
      current = std::move(next);
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Charge(int64_t amount, int64_t limit, int64_t& total) {
    AddSaturating(total, amount);
    if (limit >= 0 && total > limit) return OutOfPhloError();
    return absl::OkStatus();
  }

  void Track(const TermPtr& channel) {
    if (!rt_.options_.track_channels) return;
    if (rt_.tracked_.count(channel->hash()) != 0) return;
    auto p = ChannelOf(*channel);
    if (p.ok()) rt_.tracked_.emplace(channel->hash(), *p);
  }

  static Task OpTask(Effect e) {
    Task t;
    t.op = std::move(e);
    return t;
  }

  absl::Status Apply(Effect e, int64_t limit, int64_t& total,
                     std::vector<Task>& next) {
    if (auto* s = std::get_if<SpawnOp>(&e)) {
      Task t;
      t.par = std::move(s->par);
      t.env = std::move(s->env);
      t.rng = s->rng;
      next.push_back(std::move(t));
      return absl::OkStatus();
    }
    if (auto* call = std::get_if<CallOp>(&e)) {
      return RunObject(*call, limit, total, next);
    }
    if (auto* p = std::get_if<ProduceOp>(&e)) {
      Track(p->channel);
      ASSIGN_OR_RETURN(
          std::vector<rspace::Comm> comms,
          rt_.space_->Produce(ctx_, p->channel, p->data, p->persist));
      if (comms.empty()) return absl::OkStatus();
      for (const rspace::Comm& comm : comms) {
        RETURN_IF_ERROR(HandleComm(comm, limit, total, next));
      }
      if (p->persist) next.push_back(OpTask(std::move(e)));
      return absl::OkStatus();
    }
    auto& c = std::get<ConsumeOp>(e);
    for (const auto& ch : c.channels) Track(ch);
    ASSIGN_OR_RETURN(std::optional<rspace::Comm> comm,
                     rt_.space_->Consume(ctx_, c.channels, c.patterns,
                                         c.continuation, c.persist, c.peek));
    if (!comm.has_value()) return absl::OkStatus();
    RETURN_IF_ERROR(HandleComm(*comm, limit, total, next));
    if (c.persist) next.push_back(OpTask(std::move(e)));
    return absl::OkStatus();
  }

  absl::Status HandleComm(const rspace::Comm& comm, int64_t limit,
                          int64_t& total, std::vector<Task>& next) {
    RETURN_IF_ERROR(Charge(EventCost(comm.binds.size()), limit, total));
    std::shared_ptr<const StoredValue> kh;
    ASSIGN_OR_RETURN(const ContinuationValue* k,
                     ContinuationOf(*comm.continuation, kh));
    std::vector<SplittableRng> rngs;
    if (!k->system) rngs.push_back(k->rng.Restore());
    std::vector<ir::ParPtr> env_values;
    std::vector<std::shared_ptr<const StoredValue>> holders;
    const DataValue* first_data = nullptr;
    for (const rspace::BindResult& b : comm.binds) {
      holders.emplace_back();
      ASSIGN_OR_RETURN(const DataValue* d, DataOf(*b.datum, holders.back()));
      if (first_data == nullptr) first_data = d;
      rngs.push_back(d->rng.Restore());
      auto captures = std::static_pointer_cast<const Captures>(b.matched);
      if (captures == nullptr) {
        return absl::InternalError("COMM without match captures");
      }
      for (const auto& v : *captures) {
        env_values.push_back(v != nullptr ? v : ir::Nil());
      }
    }
    SplittableRng rng = SplittableRng::Merge(rngs);
    if (!k->system) {
      Task t;
      t.par = k->body;
      t.env = Env(std::move(env_values));
      t.rng = rng;
      next.push_back(std::move(t));
      return absl::OkStatus();
    }
    const SystemProcessDef* def = ByBodyRef(k->body_ref);
    if (def == nullptr || first_data == nullptr) {
      return absl::InternalError("COMM with an unknown system process " +
                                 std::to_string(k->body_ref));
    }
    return RunHandler(
        [&](ProcessContext& pctx) {
          return def->handler(first_data->pars, pctx);
        },
        rng, limit, total, next);
  }

  absl::Status RunObject(const CallOp& call, int64_t limit, int64_t& total,
                         std::vector<Task>& next) {
    return RunHandler(
        [&](ProcessContext& pctx) {
          return call.object->handler(call.key, call.args, pctx);
        },
        *call.rng, limit, total, next);
  }

  // Runs a native handler on the deploy's remaining phlo with space access,
  // charges what it spent, and queues its replies as next-round produces
  // (reply i uses `rng`, split by i when there are several).
  template <typename Fn>
  absl::Status RunHandler(Fn&& fn, const SplittableRng& rng, int64_t limit,
                          int64_t& total, std::vector<Task>& next) {
    PhloMeter meter(limit < 0 ? -1 : std::max<int64_t>(limit - total, 0));
    SpaceNative native(rt_.space_, ctx_, &meter, &rt_.channel_terms_);
    ProcessContext pctx;
    pctx.deploy = deploy_;
    pctx.block = block_;
    pctx.invalid_blocks = rt_.invalid_blocks_;
    // A spec run's rho:test:*:set values replace the block's.
    BlockInfo test_block;
    TestOverrides* test = rt_.options_.test_overrides;
    pctx.test = test;
    if (test != nullptr && test->active()) {
      test_block = test->Block(block_);
      pctx.block = &test_block;
      pctx.invalid_blocks = test->InvalidBlocks(pctx.invalid_blocks);
    }
    pctx.output = rt_.options_.output;
    pctx.meter = &meter;
    pctx.space = &native;
    SplittableRng handler_rng = rng.Split(kHandlerRngIndex);
    pctx.rng = &handler_rng;
    absl::StatusOr<std::vector<Reply>> replies;
    try {
      replies = fn(pctx);
    } catch (const std::exception& ex) {
      replies =
          absl::InternalError(std::string("system process: ") + ex.what());
    }
    RETURN_IF_ERROR(Charge(meter.spent(), limit, total));
    if (!replies.ok()) return replies.status();
    for (size_t i = 0; i < replies->size(); ++i) {
      Reply& r = (*replies)[i];
      ir::ParPtr chan = r.channel;
      if (const ir::Bundle* b = SingleBundle(*chan)) {
        if (!b->write_flag) {
          return absl::InvalidArgumentError(
              "trying to send on a non-writeable channel (a read-only "
              "bundle)");
        }
        chan = b->body;
      }
      DataValue data;
      data.pars = std::move(r.data);
      data.rng = StoredRng::Of(replies->size() == 1 ? rng : rng.Split(i));
      ASSIGN_OR_RETURN(TermPtr ct, MakeChannelTerm(chan));
      ASSIGN_OR_RETURN(TermPtr dt, MakeDataTerm(std::move(data)));
      RETURN_IF_ERROR(Charge(
          cost::kSend +
              cost::kStoragePerByte * static_cast<int64_t>(ct->bytes().size() +
                                                           dt->bytes().size()) +
              EventCost(1),
          limit, total));
      next.push_back(OpTask(ProduceOp{std::move(ct), std::move(dt), false}));
    }
    return absl::OkStatus();
  }

  Runtime& rt_;
  WorkerPool* pool_ = nullptr;  // null: rounds run on the caller
  std::unique_ptr<WorkerPool> owned_pool_;
  const DeployInfo* deploy_ = nullptr;
  const BlockInfo* block_ = nullptr;
  rspace::OpContext ctx_;
};

Runtime::Runtime(rspace::Space* space, RuntimeOptions options)
    : space_(space),
      options_(options),
      channel_terms_(options.channel_term_cache) {}

Runtime::~Runtime() = default;

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Create(
    rspace::Space* space, RuntimeOptions options) {
  if (space == nullptr) return absl::InvalidArgumentError("runtime: no space");
  if (options.threads < 1) {
    return absl::InvalidArgumentError("runtime: threads must be >= 1");
  }
  if (options.min_parallel_tasks < 1) {
    return absl::InvalidArgumentError(
        "runtime: min_parallel_tasks must be >= 1");
  }
  std::unique_ptr<Runtime> rt(new Runtime(space, options));
  rt->impl_ = std::make_unique<Impl>(*rt, options.threads, options.pool);
  for (const SystemProcessDef& def : rt->impl_->table()) {
    if (!def.handler || !options.install_processes) continue;
    ASSIGN_OR_RETURN(TermPtr chan,
                     MakeChannelTerm(FixedChannel(def.channel_byte)));
    BindPattern pat;
    pat.free_count = def.arity;
    for (uint32_t i = 0; i < def.arity; ++i) {
      pat.patterns.push_back(ir::VarPar(ir::Var{ir::VarKind::kFree, i}));
    }
    ASSIGN_OR_RETURN(TermPtr pt, MakePatternTerm(std::move(pat)));
    ContinuationValue k;
    k.system = true;
    k.body_ref = def.body_ref;
    ASSIGN_OR_RETURN(TermPtr kt, MakeContinuationTerm(std::move(k)));
    RETURN_IF_ERROR(space->Install(rt->matcher_, {chan}, {pt}, kt));
  }
  return rt;
}

EvalResult Runtime::Evaluate(const ir::ParPtr& program,
                             const DeployInfo& deploy, int64_t phlo_limit,
                             rspace::EventLog* log, const BlockInfo* block,
                             bool check_replay_done,
                             rspace::DeployScope* scope) {
  EvalResult result;
  if (program == nullptr || log == nullptr) {
    result.error = absl::InvalidArgumentError("evaluate: missing argument");
    return result;
  }
  std::optional<rspace::DeployScope> local;
  if (scope == nullptr) scope = &local.emplace(*space_);
  const rspace::DeployScope::Mark start = scope->mark();
  int64_t total = 0;
  absl::Status st = impl_->Run(program, deploy, block, phlo_limit, log, scope,
                               total, result.rounds, result.parallel_rounds);
  if (st.ok() && log->replay() && check_replay_done) {
    st = log->CheckReplayDone();
  }
  if (!st.ok()) {
    absl::Status revert = scope->RevertTo(start);
    if (!revert.ok()) {
      // The space is not where the deploy began: a local fault.
      st = absl::InternalError("revert after a failed deploy: " +
                               std::string(revert.message()));
    }
    result.cost = (IsOutOfPhlo(st) && phlo_limit >= 0) ? phlo_limit : total;
    if (phlo_limit >= 0 && result.cost > phlo_limit) result.cost = phlo_limit;
    result.error = st;
    return result;
  }
  result.cost = total;
  return result;
}

EvalResult Runtime::EvaluateSource(std::string_view source,
                                   const DeployInfo& deploy, int64_t phlo_limit,
                                   rspace::EventLog* log,
                                   const BlockInfo* block,
                                   bool check_replay_done,
                                   rspace::DeployScope* scope) {
  EvalResult result;
  const int64_t parse_cost =
      cost::kParsePerByte * static_cast<int64_t>(source.size());
  if (phlo_limit >= 0 && parse_cost > phlo_limit) {
    result.cost = phlo_limit;
    result.error = OutOfPhloError();
    return result;
  }
  NormalizerEnv nenv;
  ir::ParPtr deploy_id = Wrap(
      ir::Unforgeable::Make(ir::UnforgeableKind::kDeployId, deploy.deploy_id));
  ir::ParPtr deployer_id = Wrap(ir::Unforgeable::Make(
      ir::UnforgeableKind::kDeployerId, deploy.deployer_public_key));
  nenv.injections["rho:system:deployId"] = deploy_id;
  nenv.injections["rho:rchain:deployId"] = deploy_id;
  nenv.injections["rho:system:deployerId"] = deployer_id;
  nenv.injections["rho:rchain:deployerId"] = deployer_id;
  absl::StatusOr<ir::ParPtr> program = Compile(source, nenv);
  if (!program.ok()) {
    result.cost = parse_cost;
    result.error = program.status();
    result.static_error = true;
    return result;
  }
  result =
      Evaluate(*program, deploy, phlo_limit < 0 ? -1 : phlo_limit - parse_cost,
               log, block, check_replay_done, scope);
  if (IsOutOfPhlo(result.error) && phlo_limit >= 0) {
    result.cost = phlo_limit;
  } else {
    result.cost += parse_cost;
  }
  return result;
}

}  // namespace rnode::rholang::interp
