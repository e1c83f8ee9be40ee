#include "casper/contracts/helper_contracts.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "casper/contracts/pos.h"
#include "casper/contracts/registry.h"
#include "crypto/hash.h"
#include "crypto/secp256k1.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/printer.h"
#include "rspace/event_log.h"
#include "util/bytes.h"
#include "util/status_macros.h"

namespace rnode::casper::contracts {
namespace {

// ListOps (rho:lang:listOps): list helpers over user contracts. Every method
// replies on its last argument. fold calls step!(x, acc, r) left to right;
// partialFold's step replies (stop, acc) and the fold ends at the first
// stop, replying (stopped, acc); map, filter, forall and exists call the
// contract one element at a time in order (forall and exists stop at the
// first answer that decides); parMap starts every call at once and keeps
// list order; unorderedParMap keeps completion order; foreach replies true
// after the last acknowledgement. The *Clean variants take a state passed
// as the first argument of every call.
constexpr std::string_view kListOps = R"rho(
new ListOps, registered,
    insertSigned(`rho:registry:insertSigned:secp256k1`) in {

  contract ListOps(@"prepend", @head, @tail, ret) = { ret!([head] ++ tail) } |
  contract ListOps(@"append", @list, @element, ret) = { ret!(list ++ [element]) } |
  contract ListOps(@"head", @list, ret) = {
    match list {
      [first ..._] => ret!(first)
      _ => ret!(Nil)
    }
  } |
  contract ListOps(@"reverse", @list, ret) = {
    new loop in {
      contract loop(@left, @done) = {
        match left {
          [x ...rest] => loop!(rest, [x] ++ done)
          _ => ret!(done)
        }
      } |
      loop!(list, [])
    }
  } |
  contract ListOps(@"range", @start, @end, ret) = {
    new loop in {
      contract loop(@i, @acc) = {
        if (i < start) { ret!(acc) } else { loop!(i - 1, [i] ++ acc) }
      } |
      loop!(end - 1, [])
    }
  } |
  contract ListOps(@"zip", @first, @second, ret) = {
    new loop in {
      contract loop(@pair, @acc) = {
        match pair {
          ([a ...moreA], [b ...moreB]) => loop!((moreA, moreB), acc ++ [(a, b)])
          _ => ret!(acc)
        }
      } |
      loop!((first, second), [])
    }
  } |
  contract ListOps(@"indexOf", @list, @value, ret) = {
    new loop in {
      contract loop(@left, @i) = {
        match left {
          [x ...rest] => {
            if (x == value) { ret!(i) } else { loop!(rest, i + 1) }
          }
          _ => ret!(-1)
        }
      } |
      loop!(list, 0)
    }
  } |
  contract ListOps(@"sum", @list, ret) = {
    new add in {
      contract add(@x, @total, r) = { r!(total + x) } |
      ListOps!("fold", list, 0, *add, *ret)
    }
  } |

  contract ListOps(@"fold", @list, @start, step, ret) = {
    new loop in {
      contract loop(@left, @acc) = {
        match left {
          [x ...rest] => {
            new r in { step!(x, acc, *r) | for (@next <- r) { loop!(rest, next) } }
          }
          _ => ret!(acc)
        }
      } |
      loop!(list, start)
    }
  } |
  contract ListOps(@"partialFold", @list, @start, step, ret) = {
    new loop in {
      contract loop(@left, @acc) = {
        match left {
          [x ...rest] => {
            new r in {
              step!(x, acc, *r) |
              for (@stop, @next <- r) {
                if (stop) { ret!(true, next) } else { loop!(rest, next) }
              }
            }
          }
          _ => ret!(false, acc)
        }
      } |
      loop!(list, start)
    }
  } |
  contract ListOps(@"map", @list, f, ret) = {
    new step in {
      contract step(@x, @acc, r) = {
        new out in { f!(x, *out) | for (@y <- out) { r!(acc ++ [y]) } }
      } |
      ListOps!("fold", list, [], *step, *ret)
    }
  } |
  contract ListOps(@"parMap", @list, f, ret) = {
    new launch, gather in {
      contract launch(@left, @outs) = {
        match left {
          [x ...rest] => {
            new out in { f!(x, *out) | launch!(rest, outs ++ [*out]) }
          }
          _ => gather!(outs, [])
        }
      } |
      contract gather(@outs, @acc) = {
        match outs {
          [out ...rest] => for (@y <- @out) { gather!(rest, acc ++ [y]) }
          _ => ret!(acc)
        }
      } |
      launch!(list, [])
    }
  } |
  contract ListOps(@"unorderedParMap", @list, f, ret) = {
    new results, launch, gather in {
      contract launch(@left, @count) = {
        match left {
          [x ...rest] => { f!(x, *results) | launch!(rest, count + 1) }
          _ => gather!(count, [])
        }
      } |
      contract gather(@waiting, @acc) = {
        if (waiting == 0) { ret!(acc) } else {
          for (@y <- results) { gather!(waiting - 1, [y] ++ acc) }
        }
      } |
      launch!(list, 0)
    }
  } |
  contract ListOps(@"foreach", @list, proc, done) = {
    new loop in {
      contract loop(@left) = {
        match left {
          [x ...rest] => {
            new ack in { proc!(x, *ack) | for (_ <- ack) { loop!(rest) } }
          }
          _ => done!(true)
        }
      } |
      loop!(list)
    }
  } |
  contract ListOps(@"forall", @list, pred, ret) = {
    new loop in {
      contract loop(@left) = {
        match left {
          [x ...rest] => {
            new r in {
              pred!(x, *r) |
              for (@holds <- r) { if (holds) { loop!(rest) } else { ret!(false) } }
            }
          }
          _ => ret!(true)
        }
      } |
      loop!(list)
    }
  } |
  contract ListOps(@"exists", @list, pred, ret) = {
    new loop in {
      contract loop(@left) = {
        match left {
          [x ...rest] => {
            new r in {
              pred!(x, *r) |
              for (@holds <- r) { if (holds) { ret!(true) } else { loop!(rest) } }
            }
          }
          _ => ret!(false)
        }
      } |
      loop!(list)
    }
  } |
  contract ListOps(@"filter", @list, pred, ret) = {
    new step in {
      contract step(@x, @acc, r) = {
        new keep in {
          pred!(x, *keep) |
          for (@k <- keep) { if (k) { r!(acc ++ [x]) } else { r!(acc) } }
        }
      } |
      ListOps!("fold", list, [], *step, *ret)
    }
  } |

  // The Clean variants pass a state as the first argument of every call
  // of the given contract; each wraps it and runs the plain method.
  contract ListOps(@"foldClean", @list, @start, step, @state, ret) = {
    new wrapped in {
      contract wrapped(@x, @acc, r) = { step!(state, x, acc, *r) } |
      ListOps!("fold", list, start, *wrapped, *ret)
    }
  } |
  contract ListOps(@"partialFoldClean", @list, @start, step, @state, ret) = {
    new wrapped in {
      contract wrapped(@x, @acc, r) = { step!(state, x, acc, *r) } |
      ListOps!("partialFold", list, start, *wrapped, *ret)
    }
  } |
  contract ListOps(@"mapClean", @list, f, @state, ret) = {
    new wrapped in {
      contract wrapped(@x, r) = { f!(state, x, *r) } |
      ListOps!("map", list, *wrapped, *ret)
    }
  } |
  contract ListOps(@"parMapClean", @list, f, @state, ret) = {
    new wrapped in {
      contract wrapped(@x, r) = { f!(state, x, *r) } |
      ListOps!("parMap", list, *wrapped, *ret)
    }
  } |
  contract ListOps(@"unorderedParMapClean", @list, f, @state, ret) = {
    new wrapped in {
      contract wrapped(@x, r) = { f!(state, x, *r) } |
      ListOps!("unorderedParMap", list, *wrapped, *ret)
    }
  } |
  contract ListOps(@"foreachClean", @list, proc, @state, done) = {
    new wrapped in {
      contract wrapped(@x, ack) = { proc!(state, x, *ack) } |
      ListOps!("foreach", list, *wrapped, *done)
    }
  } |
  contract ListOps(@"forallClean", @list, pred, @state, ret) = {
    new wrapped in {
      contract wrapped(@x, r) = { pred!(state, x, *r) } |
      ListOps!("forall", list, *wrapped, *ret)
    }
  } |
  contract ListOps(@"existsClean", @list, pred, @state, ret) = {
    new wrapped in {
      contract wrapped(@x, r) = { pred!(state, x, *r) } |
      ListOps!("exists", list, *wrapped, *ret)
    }
  } |
  contract ListOps(@"filterClean", @list, pred, @state, ret) = {
    new wrapped in {
      contract wrapped(@x, r) = { pred!(state, x, *r) } |
      ListOps!("filter", list, *wrapped, *ret)
    }
  } |

  insertSigned!(
    "040126690519dc9b0f52876cb13458e15697794dd87d7c6477707c7efa4cce8a36b634eab5056bd4e3ba385ab14a638e4ac7d3b3e4968da3d66933fc04bc7038b5".hexToBytes(),
    (9223372036854775807, bundle+{*ListOps}),
    "3045022100e28b5bf2217ef93d3159844208be8fc06392d9b9b174fab1491b09c678360ff20220408dddbf62aabc66fc783c7efe8f20b0c5a6d7a6e2620bf7e7912fc052cf6c8a".hexToBytes(),
    *registered)
}
)rho";

// NonNegativeNumber (rho:lang:nonNegativeNumber): a counter that never goes
// below 0 or above the largest Int.
constexpr std::string_view kNonNegativeNumber = R"rho(
new NonNegativeNumber, registered,
    insertSigned(`rho:registry:insertSigned:secp256k1`) in {
  // NonNegativeNumber!(initial, ret) replies a write-only number object
  // holding `initial` (0 when it is negative or not an Int). Its methods
  // ("add", x, ok) and ("sub", x, ok) reply whether they changed it: a
  // negative x, a sum above the largest Int or a difference below 0 change
  // nothing. ("value", ret) replies the value.
  contract NonNegativeNumber(@initial, ret) = {
    new number, held in {
      match initial {
        Int => { if (initial >= 0) { held!(initial) } else { held!(0) } }
        _ => held!(0)
      } |
      contract number(@"add", @x, ok) = {
        if (x < 0) { ok!(false) } else {
          for (@v <- held) {
            if (x <= 9223372036854775807 - v) { held!(v + x) | ok!(true) }
            else { held!(v) | ok!(false) }
          }
        }
      } |
      contract number(@"sub", @x, ok) = {
        if (x < 0) { ok!(false) } else {
          for (@v <- held) {
            if (x <= v) { held!(v - x) | ok!(true) }
            else { held!(v) | ok!(false) }
          }
        }
      } |
      contract number(@"value", ret) = {
        for (@v <<- held) { ret!(v) }
      } |
      ret!(bundle+{*number})
    }
  } |
  insertSigned!(
    "04e1559d809924e564dce57e34646e155b144d2a504ce7ee519d7a5108fd42f1038d08d745e5ea21cb53d6aa7c7174a768fa373207a83bc947a20c6a02ece7a60e".hexToBytes(),
    (9223372036854775807, bundle+{*NonNegativeNumber}),
    "3044022063a76499f5b658d976c0cc108d7335464f806d43a5a80cf9bf772259810f9d9002202c77c368f2b2338315bad9060bad75d4e59ad55ea8a09fe3fcb06c364bacb1a9".hexToBytes(),
    *registered)
}
)rho";

// AuthKey (rho:system:authKey): keys that prove they were made for a shape
// without revealing it.
constexpr std::string_view kAuthKey = R"rho(
new AuthKey, registered, seal,
    insertSigned(`rho:registry:insertSigned:secp256k1`) in {
  // ("make", shape, ret) replies a key for `shape`: a write-only name that
  // answers ("challenge", ret) with bundle0{(*seal, shape)}. Only this
  // contract knows `seal`, so only a key it made gives that answer, and the
  // bundle0 keeps the shape from being read out of it.
  contract AuthKey(@"make", @shape, ret) = {
    new key in {
      contract key(@"challenge", answer) = { answer!(bundle0{(*seal, shape)}) } |
      ret!(bundle+{*key})
    }
  } |
  // ("check", key, shape, ret) replies whether `key` was made for `shape`.
  contract AuthKey(@"check", key, @shape, ret) = {
    new answer in {
      key!("challenge", *answer) |
      for (@got <- answer) { ret!(got == bundle0{(*seal, shape)}) }
    }
  } |
  insertSigned!(
    "04f4b4417f930e6fab5765ac0defcf9fce169982acfd046e7c27f9b14c0804014623c0439e5c8035e9607599a549303b5b6b90cd9685e6965278bddca65dac7510".hexToBytes(),
    (9223372036854775807, bundle+{*AuthKey}),
    "3044022038044777f2faccfc503363ce70d5701ae64969ca98e64049f92d8477fdea0c1402200843c073c6f0121f580f38bb2940f16cef54fc24ea325ebc00230fa6e3117549".hexToBytes(),
    *registered)
}
)rho";

// Stack (rho:lang:stack): init, push, pop ((true, top) or (false, "stack is
// empty")), size, isEmpty, toList (bottom first).
constexpr std::string_view kStack = R"rho(
new Stack, registered,
    insertSigned(`rho:registry:insertSigned:secp256k1`), sizeOf, item in {
  // A stack is the name `init` replies; its size is on @(stack, *sizeOf)
  // and its element i (0 at the bottom) on @(stack, *item, i).
  contract Stack(@"init", ret) = {
    new stack in { @(*stack, *sizeOf)!(0) | ret!(*stack) }
  } |
  contract Stack(@"size", @stack, ret) = {
    for (@n <<- @(stack, *sizeOf)) { ret!(n) }
  } |
  contract Stack(@"isEmpty", @stack, ret) = {
    for (@n <<- @(stack, *sizeOf)) { ret!(n == 0) }
  } |
  contract Stack(@"push", @stack, @value, ret) = {
    for (@n <- @(stack, *sizeOf)) {
      @(stack, *item, n)!(value) | @(stack, *sizeOf)!(n + 1) | ret!(n + 1)
    }
  } |
  contract Stack(@"pop", @stack, ret) = {
    for (@n <- @(stack, *sizeOf)) {
      if (n == 0) {
        @(stack, *sizeOf)!(0) | ret!((false, "stack is empty"))
      } else {
        for (@top <- @(stack, *item, n - 1)) {
          @(stack, *sizeOf)!(n - 1) | ret!((true, top))
        }
      }
    }
  } |
  // Bottom first; the size is held while the elements are read.
  contract Stack(@"toList", @stack, ret) = {
    for (@n <- @(stack, *sizeOf)) {
      new collect in {
        contract collect(@i, @acc) = {
          if (i == n) { @(stack, *sizeOf)!(n) | ret!(acc) } else {
            for (@x <<- @(stack, *item, i)) { collect!(i + 1, acc ++ [x]) }
          }
        } |
        collect!(0, [])
      }
    }
  } |
  insertSigned!(
    "04d545071374ee35b3c68dea1446f992a8539627f9c77ce6a99f4946cb3d9514c5c3e13cb74af509d4e5a31aa82253d927e9d549273a69c8ec22209cf05a8ff9c1".hexToBytes(),
    (9223372036854775807, bundle+{*Stack}),
    "3045022100c2046556b4c2e02f93ee486a3136af75ea2c5ad566d890d0bb438cb864272f5302207f5b49703f55c3b738f48fb47f7eee556204646ee55f46e83d9ea88ac36f52bb".hexToBytes(),
    *registered)
}
)rho";

// Either (rho:lang:either): (true, value) is Right, (false, error) Left;
// lifting, map, mapLeft, flatMap, map2 (over a receive process), productR,
// compose, their Clean and "<-" (read the arguments from channels) forms.
constexpr std::string_view kEither = R"rho(
new Either, registered,
    insertSigned(`rho:registry:insertSigned:secp256k1`) in {
  // An Either is (true, value) (Right) or (false, error) (Left). Each
  // method replies on its last argument. A method named "m <-" reads its
  // Either (or Bool, list, ...) arguments from channels first, then runs "m".

  contract Either(@"fromNillable", @value, @nilValue, ret) = {
    match value {
      Nil => ret!((false, nilValue))
      _ => ret!((true, value))
    }
  } |
  contract Either(@"fromBoolean", @success, @failureMessage, ret) = {
    match success {
      true => ret!((true, Nil))
      false => ret!((false, failureMessage))
    }
  } |
  contract Either(@"fromSingletonList", @list, @failureMessage, ret) = {
    match list {
      [] => ret!((false, failureMessage))
      [only] => ret!((true, only))
      _ => ret!((false, "Invalid argument, expected a list of at most 1 element"))
    }
  } |
  contract Either(@"fromNillableError", @error, ret) = {
    match error {
      Nil => ret!((true, Nil))
      _ => ret!((false, error))
    }
  } |
  // The first Left, else b.
  contract Either(@"productR", @a, @b, ret) = {
    match a {
      (false, _) => ret!(a)
      _ => ret!(b)
    }
  } |
  // f is a receive `for (x, y, r <- fn) { ... }`: it is run, and sent both
  // Right values and a reply channel; its reply becomes the Right result.
  contract Either(@"map2", @a, @b, @f, ret) = {
    match (a, b) {
      ((false, _), _) => ret!(a)
      (_, (false, _)) => ret!(b)
      ((true, x), (true, y)) => {
        match f {
          { for (first, second, reply <- fn) { _ } } => {
            new out in { f | fn!(x, y, *out) | for (@v <- out) { ret!((true, v)) } }
          }
        }
      }
    }
  } |
  // As map2 with f a receive `for (@state, x, y, r <- fn) { ... }`.
  contract Either(@"map2Clean", @a, @b, @f, @state, ret) = {
    match (a, b) {
      ((false, _), _) => ret!(a)
      (_, (false, _)) => ret!(b)
      ((true, x), (true, y)) => {
        match f {
          { for (@given, first, second, reply <- fn) { _ } } => {
            new out in {
              f | fn!(state, x, y, *out) | for (@v <- out) { ret!((true, v)) }
            }
          }
        }
      }
    }
  } |
  contract Either(@"flatMap", @either, f, ret) = {
    match either {
      (true, value) => f!(value, *ret)
      _ => ret!(either)
    }
  } |
  contract Either(@"flatMapClean", @either, f, @state, ret) = {
    match either {
      (true, value) => f!(state, value, *ret)
      _ => ret!(either)
    }
  } |
  contract Either(@"map", @either, f, ret) = {
    match either {
      (true, value) => new out in { f!(value, *out) | for (@v <- out) { ret!((true, v)) } }
      _ => ret!(either)
    }
  } |
  contract Either(@"mapClean", @either, f, @state, ret) = {
    match either {
      (true, value) => new out in { f!(state, value, *out) | for (@v <- out) { ret!((true, v)) } }
      _ => ret!(either)
    }
  } |
  contract Either(@"mapLeft", @either, f, ret) = {
    match either {
      (false, error) => new out in { f!(error, *out) | for (@e <- out) { ret!((false, e)) } }
      _ => ret!(either)
    }
  } |
  contract Either(@"mapLeftClean", @either, f, @state, ret) = {
    match either {
      (false, error) => new out in { f!(state, error, *out) | for (@e <- out) { ret!((false, e)) } }
      _ => ret!(either)
    }
  } |
  // flatMap through the functions in turn, from (true, input); stops at the
  // first Left.
  contract Either(@"compose", @input, @functions, ret) = {
    new step in {
      contract step(@acc, @left) = {
        match (acc, left) {
          ((true, value), [f ...rest]) => {
            new out in { @f!(value, *out) | for (@next <- out) { step!(next, rest) } }
          }
          _ => ret!(acc)
        }
      } |
      step!((true, input), functions)
    }
  } |
  // As compose over (function, state) pairs: function!(state, value, r).
  contract Either(@"composeClean", @input, @pairs, ret) = {
    new step in {
      contract step(@acc, @left) = {
        match (acc, left) {
          ((true, value), [(f, state) ...rest]) => {
            new out in {
              @f!(state, value, *out) | for (@next <- out) { step!(next, rest) }
            }
          }
          _ => ret!(acc)
        }
      } |
      step!((true, input), pairs)
    }
  } |

  contract Either(@"fromNillable <-", valueCh, @nilValue, ret) = {
    for (@value <- valueCh) { Either!("fromNillable", value, nilValue, *ret) }
  } |
  contract Either(@"fromBoolean <-", successCh, @failureMessage, ret) = {
    for (@success <- successCh) {
      Either!("fromBoolean", success, failureMessage, *ret)
    }
  } |
  contract Either(@"fromSingletonList <-", listCh, @failureMessage, ret) = {
    for (@list <- listCh) {
      Either!("fromSingletonList", list, failureMessage, *ret)
    }
  } |
  contract Either(@"fromNillableError <-", errorCh, ret) = {
    for (@error <- errorCh) { Either!("fromNillableError", error, *ret) }
  } |
  contract Either(@"productR <-", aCh, bCh, ret) = {
    for (@a <- aCh) { for (@b <- bCh) { Either!("productR", a, b, *ret) } }
  } |
  contract Either(@"map2 <-", aCh, bCh, @f, ret) = {
    for (@a <- aCh) { for (@b <- bCh) { Either!("map2", a, b, f, *ret) } }
  } |
  contract Either(@"map2Clean <-", aCh, bCh, @f, @state, ret) = {
    for (@a <- aCh) {
      for (@b <- bCh) { Either!("map2Clean", a, b, f, state, *ret) }
    }
  } |
  contract Either(@"flatMap <-", eitherCh, f, ret) = {
    for (@either <- eitherCh) { Either!("flatMap", either, *f, *ret) }
  } |
  contract Either(@"flatMapClean <-", eitherCh, f, @state, ret) = {
    for (@either <- eitherCh) { Either!("flatMapClean", either, *f, state, *ret) }
  } |
  contract Either(@"map <-", eitherCh, f, ret) = {
    for (@either <- eitherCh) { Either!("map", either, *f, *ret) }
  } |
  contract Either(@"mapClean <-", eitherCh, f, @state, ret) = {
    for (@either <- eitherCh) { Either!("mapClean", either, *f, state, *ret) }
  } |
  contract Either(@"mapLeft <-", eitherCh, f, ret) = {
    for (@either <- eitherCh) { Either!("mapLeft", either, *f, *ret) }
  } |
  contract Either(@"mapLeftClean <-", eitherCh, f, @state, ret) = {
    for (@either <- eitherCh) { Either!("mapLeftClean", either, *f, state, *ret) }
  } |

  insertSigned!(
    "04c71f6c7b87edf4bec14f16f715ee49c6fea918549abdf06c734d384b60ba922990317cc4bf68da8c85b455a65595cf7007f1e54bfd6be26ffee53d1ea6d7406b".hexToBytes(),
    (9223372036854775807, bundle+{*Either}),
    "3045022100f11c8e44ac0635e722e94dcc973237fa024c76890931e5ab02de892ad766b7df02207a06e99c5c298b12280a83bbd871bd37ae4c0de9d8a2c45d8ecae4e5aaf1ced2".hexToBytes(),
    *registered)
}
)rho";

// MakeMint (rho:system:makeMint): mints and their purses (makePurse,
// getBalance, deposit, split, sprout, setLog and the decr protocol between
// purses of one mint). Looks up NonNegativeNumber, so it comes after it.
constexpr std::string_view kMakeMint = R"rho(
new MakeMint, registered, lookup(`rho:registry:lookup`), numberCh,
    insertSigned(`rho:registry:insertSigned:secp256k1`) in {
  lookup!(`rho:lang:nonNegativeNumber`, *numberCh) |
  for (@(_, NonNegativeNumber) <- numberCh) {
    // MakeMint!(ret) replies a new mint. A mint makes purses; purses of one
    // mint move amounts between each other and nothing else can. Each mint
    // has a private seal: a purse shows which mint made it by answering
    // ("decr", r) with bundle0{*seal}, and a withdrawal needs the
    // capability bundle0{(*seal, purse)}, which only that mint's purses
    // can build and which names the purse it is good for.
    contract MakeMint(ret) = {
      new mint, makePurse, seal in {
        contract mint(@"makePurse", @initial, ret) = {
          new numberReply in {
            @NonNegativeNumber!(initial, *numberReply) |
            for (@balance <- numberReply) { makePurse!(balance, *ret) }
          }
        } |
        contract makePurse(@balance, ret) = {
          new purse, logStore, blockData(`rho:block:data`) in {
            logStore!(Nil) |
            // Sends `entry ++ [blockNumber, timestamp, sender]` to the log
            // channel, if one is set.
            new log in {
              contract log(@entry) = {
                for (@logCh <<- logStore) {
                  if (logCh != Nil) {
                    new block in {
                      blockData!(*block) |
                      for (@number, @time, @sender <- block) {
                        @logCh!(entry ++ [number, time, sender])
                      }
                    }
                  }
                }
              } |
              // Which mint made this purse.
              contract purse(@"decr", ret) = { ret!(bundle0{*seal}) } |
              // Takes `amount` out, given this purse's withdrawal capability.
              contract purse(@"decr", @capability, @amount, ret) = {
                if (capability == bundle0{(*seal, bundle+{*purse})}) {
                  new taken in {
                    @balance!("sub", amount, *taken) |
                    for (@ok <- taken) {
                      ret!(ok) | log!(["*decr", amount, ok])
                    }
                  }
                } else {
                  ret!(false) | log!(["*decr", amount, false])
                }
              } |
              contract purse(@"setLog", logCh, ack) = {
                for (_ <- logStore) { logStore!(*logCh) | ack!(Nil) }
              } |
              contract purse(@"getBalance", ret) = { @balance!("value", *ret) } |
              contract purse(@"sprout", ret) = { mint!("makePurse", 0, *ret) } |
              // Moves `amount` from `src` into this purse: both must be of
              // this mint, the sum must fit and `src` must hold the amount.
              contract purse(@"deposit", @amount, @src, ok) = {
                new mintOf in {
                  @src!("decr", *mintOf) |
                  for (@srcMint <- mintOf) {
                    if (srcMint != bundle0{*seal}) {
                      ok!(false) | log!(["deposit", amount, src.toByteArray(), false])
                    } else {
                      new added in {
                        @balance!("add", amount, *added) |
                        for (@addOk <- added) {
                          if (not addOk) {
                            ok!(false) |
                            log!(["deposit", amount, src.toByteArray(), false])
                          } else {
                            new taken in {
                              @src!("decr", bundle0{(*seal, src)}, amount, *taken) |
                              for (@takeOk <- taken) {
                                if (takeOk) {
                                  ok!(true) |
                                  log!(["deposit", amount, src.toByteArray(), true])
                                } else {
                                  // src did not hold it: take it back out.
                                  new undone in {
                                    @balance!("sub", amount, *undone) |
                                    for (_ <- undone) { ok!(false) }
                                  } |
                                  log!(["deposit", amount, src.toByteArray(), false])
                                }
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                }
              } |
              // A new purse of this mint holding `amount` taken from this
              // one: replies [newPurse], or [] when this purse lacks it.
              contract purse(@"split", @amount, ret) = {
                new sprouted, moved in {
                  purse!("sprout", *sprouted) |
                  for (@fresh <- sprouted) {
                    @fresh!("deposit", amount, bundle+{*purse}, *moved) |
                    for (@ok <- moved) {
                      if (ok) { ret!([fresh]) } else { ret!([]) }
                    }
                  }
                }
              } |
              ret!(bundle+{*purse})
            }
          }
        } |
        ret!(bundle+{*mint})
      }
    }
  } |
  insertSigned!(
    "0470256c078e105d2958b9cf66f2161d83368f483c0219790277fb726a459be7f56a9a48bbecf72bcaed6a3515bd0a144faf6a6a8de8f6c9b3b7dff297eb371f28".hexToBytes(),
    (9223372036854775807, bundle+{*MakeMint}),
    "3045022100f5219d08be4a1f8b801a6fc549c66bed3297ca618348a8b980ac9e9a0c5a95fe02205b2743f3d0b10c5e7754ff14313cc59687c5329fe5d430aaf84548271cd5fd4c".hexToBytes(),
    *registered)
}
)rho";

// TreeHashMap (rho:lang:treeHashMap): a map spread over one channel per
// node of a tree of hash prefixes, so that writers of different keys rarely
// touch the same channel: init(depth), get, set, contains, update, delete,
// getOrElse, fastUnsafeGet, toMap, depth. The public registry stores it
// under the plain URI (no signed insert), so it is exported for the
// installer.
constexpr std::string_view kTreeHashMap = R"rho(
new TreeHashMap, nodeOf, depthOf, walk, create, collect,
    keccak(`rho:crypto:keccak256Hash`) in {
  // A map made with depth d files each key under the first d bytes of the
  // Keccak-256 hash of key.toByteArray(). The node at prefix p (a ByteArray)
  // is the datum on @(map, *nodeOf, p): above depth d, the Set of next
  // bytes (one-byte ByteArrays) that have a node; at depth d, the Map of
  // the keys filed there. A node exists once a key has been set under it;
  // readers peek, writers take the node they change.
  contract TreeHashMap(@"init", @depth, ret) = {
    new map in {
      @(*map, *depthOf)!!(depth) |
      match depth {
        0 => @(*map, *nodeOf, "".hexToBytes())!({})
        _ => @(*map, *nodeOf, "".hexToBytes())!(Set())
      } |
      ret!(*map)
    }
  } |
  contract TreeHashMap(@"depth", @map, ret) = {
    for (@depth <<- @(map, *depthOf)) { ret!(depth) }
  } |

  // Replies (hash, depth) for `key` in `map`.
  contract walk(@map, @key, ret) = {
    new hashed in {
      keccak!(key.toByteArray(), *hashed) |
      for (@hash <- hashed; @depth <<- @(map, *depthOf)) { ret!(hash, depth) }
    }
  } |
  // Peeks down the path of `hash`; replies the leaf Map, or Nil when a
  // node on the path does not exist.
  new leafOf in {
    contract leafOf(@map, @hash, @i, @depth, ret) = {
      for (@node <<- @(map, *nodeOf, hash.slice(0, i))) {
        if (i == depth) { ret!(node) } else {
          if (node.contains(hash.slice(i, i + 1))) {
            leafOf!(map, hash, i + 1, depth, *ret)
          } else { ret!(Nil) }
        }
      }
    } |
    contract TreeHashMap(@"get", @map, @key, ret) = {
      new at, leaf in {
        walk!(map, key, *at) |
        for (@hash, @depth <- at) {
          leafOf!(map, hash, 0, depth, *leaf) |
          for (@found <- leaf) {
            match found { Nil => ret!(Nil)  _ => ret!(found.get(key)) }
          }
        }
      }
    } |
    contract TreeHashMap(@"contains", @map, @key, ret) = {
      new at, leaf in {
        walk!(map, key, *at) |
        for (@hash, @depth <- at) {
          leafOf!(map, hash, 0, depth, *leaf) |
          for (@found <- leaf) {
            match found { Nil => ret!(false)  _ => ret!(found.contains(key)) }
          }
        }
      }
    } |
    // Replaces the value at `key` with update's reply to the old one (Nil
    // when absent), if a key has been filed under the same leaf; replies
    // Nil.
    contract TreeHashMap(@"update", @map, @key, update, ret) = {
      new at, leaf in {
        walk!(map, key, *at) |
        for (@hash, @depth <- at) {
          leafOf!(map, hash, 0, depth, *leaf) |
          for (@found <- leaf) {
            match found {
              Nil => ret!(Nil)
              _ => {
                for (@current <- @(map, *nodeOf, hash.slice(0, depth))) {
                  new next in {
                    update!(current.get(key), *next) |
                    for (@value <- next) {
                      @(map, *nodeOf, hash.slice(0, depth))!(current.set(key, value)) |
                      ret!(Nil)
                    }
                  }
                }
              }
            }
          }
        }
      }
    } |
    // Removes `key`; replies its value, or Nil.
    contract TreeHashMap(@"delete", @map, @key, ret) = {
      new at, leaf in {
        walk!(map, key, *at) |
        for (@hash, @depth <- at) {
          leafOf!(map, hash, 0, depth, *leaf) |
          for (@found <- leaf) {
            match found {
              Nil => ret!(Nil)
              _ => {
                for (@current <- @(map, *nodeOf, hash.slice(0, depth))) {
                  @(map, *nodeOf, hash.slice(0, depth))!(current.delete(key)) |
                  ret!(current.get(key))
                }
              }
            }
          }
        }
      }
    }
  } |
  contract TreeHashMap(@"fastUnsafeGet", @map, @key, ret) = {
    new at in {
      walk!(map, key, *at) |
      for (@hash, @depth <- at) {
        for (@leaf <<- @(map, *nodeOf, hash.slice(0, depth))) { ret!(leaf.get(key)) }
      }
    }
  } |
  contract TreeHashMap(@"getOrElse", @map, @key, valueCh, nilCh) = {
    new got in {
      TreeHashMap!("get", map, key, *got) |
      for (@value <- got) {
        match value { Nil => nilCh!()  _ => valueCh!(value) }
      }
    }
  } |

  // Makes the path of `hash` exist down to the leaf, then sets the key.
  contract create(@map, @hash, @i, @depth, @key, @value, ret) = {
    if (i == depth) {
      for (@leaf <- @(map, *nodeOf, hash.slice(0, i))) {
        @(map, *nodeOf, hash.slice(0, i))!(leaf.set(key, value)) | ret!(Nil)
      }
    } else {
      for (@seen <<- @(map, *nodeOf, hash.slice(0, i))) {
        if (seen.contains(hash.slice(i, i + 1))) {
          create!(map, hash, i + 1, depth, key, value, *ret)
        } else {
          for (@children <- @(map, *nodeOf, hash.slice(0, i))) {
            if (children.contains(hash.slice(i, i + 1))) {
              @(map, *nodeOf, hash.slice(0, i))!(children)
            } else {
              if (i + 1 == depth) {
                @(map, *nodeOf, hash.slice(0, i + 1))!({})
              } else {
                @(map, *nodeOf, hash.slice(0, i + 1))!(Set())
              } |
              @(map, *nodeOf, hash.slice(0, i))!(children.add(hash.slice(i, i + 1)))
            } |
            create!(map, hash, i + 1, depth, key, value, *ret)
          }
        }
      }
    }
  } |
  contract TreeHashMap(@"set", @map, @key, @value, ret) = {
    new at in {
      walk!(map, key, *at) |
      for (@hash, @depth <- at) { create!(map, hash, 0, depth, key, value, *ret) }
    }
  } |

  // Every entry, as one Map.
  contract collect(@map, @prefix, @i, @depth, ret) = {
    for (@node <<- @(map, *nodeOf, prefix)) {
      if (i == depth) { ret!(node) } else {
        new loop in {
          contract loop(@left, @acc) = {
            match left {
              [b ...rest] => {
                new part in {
                  collect!(map, prefix ++ b, i + 1, depth, *part) |
                  for (@m <- part) { loop!(rest, acc.union(m)) }
                }
              }
              _ => ret!(acc)
            }
          } |
          loop!(node.toList(), {})
        }
      }
    }
  } |
  contract TreeHashMap(@"toMap", @map, ret) = {
    for (@depth <<- @(map, *depthOf)) {
      collect!(map, "".hexToBytes(), 0, depth, *ret)
    }
  } |
  @"rnode:helper:export"!(bundle+{*TreeHashMap})
}
)rho";

// The multi-signature vault (rho:vault:multiSig): a system vault at the
// address of a private name, spent by a quorum of signers. A signer is a
// public key (it authorises with the key `deployerAuthKey` makes for its
// deployer) or an unsealer of a sealer/unsealer pair (it authorises with a
// box sealing the exact call: (vault, target, amount, ret) for transfer,
// (vault, target, amount, nonce, ret) for confirm). With quorum 1 a
// transfer moves the funds at once and replies (true, (false, "done"));
// otherwise it replies (true, (true, nonce)) and the funds move at the
// quorum-th confirm. Finished nonces are forgotten (the map stays small).
constexpr std::string_view kMultiSigVault = R"rho(
new MultiSigVault, registered, owner, lookup(`rho:registry:lookup`),
    VaultAddress(`rho:vault:address`), idOps(`rho:system:deployerId:ops`),
    insertSigned(`rho:registry:insertSigned:secp256k1`),
    systemVaultCh in {
  lookup!(`rho:vault:system`, *systemVaultCh) |
  for (@(_, SystemVault) <- systemVaultCh) {

    // A pair of names: sealer!(value, ret) replies a fresh box holding
    // value; unsealer!(box, ret) replies (true, value) for a box of this
    // pair, (false, "Invalid box") for anything else.
    contract MultiSigVault(@"makeSealerUnsealer", ret) = {
      new sealer, unsealer, boxes in {
        boxes!({}) |
        contract sealer(@value, reply) = {
          new box in {
            for (@sealed <- boxes) {
              boxes!(sealed.set(*box, value)) | reply!(*box)
            }
          }
        } |
        contract unsealer(@box, reply) = {
          for (@sealed <<- boxes) {
            if (sealed.contains(box)) { reply!((true, sealed.get(box))) }
            else { reply!((false, "Invalid box")) }
          }
        } |
        ret!((*sealer, *unsealer))
      }
    } |

    // The key of the deployer's public key as a signer. Only this contract
    // holds `owner`, so only it can make one.
    contract MultiSigVault(@"deployerAuthKey", deployerId, ret) = {
      new keyCh, addressCh in {
        idOps!("pubKeyBytes", *deployerId, *keyCh) |
        for (@publicKey <- keyCh) {
          VaultAddress!("fromPublicKey", publicKey, *addressCh) |
          for (@address <- addressCh) { ret!(bundle0{(*owner, address)}) }
        }
      }
    } |

    contract MultiSigVault(@"create", @publicKeys, @unsealers, @quorum, ret) = {
      if (quorum <= 0 or quorum > publicKeys.length() + unsealers.length()) {
        ret!((false, "invalid quorum size"))
      } else {
        new unf, vault, addressCh, sysKeyCh, foundCh, signersCh, toAddresses,
            verify, byKey, bySealer, counter, pending in {
          VaultAddress!("fromUnforgeable", *unf, *addressCh) |
          @SystemVault!("unforgeableAuthKey", *unf, *sysKeyCh) |

          // The signer keys' vault addresses, in order.
          contract toAddresses(@keys, @done, reply) = {
            match keys {
              [] => reply!(done)
              [key ...rest] => {
                new addr in {
                  VaultAddress!("fromPublicKey", key, *addr) |
                  for (@a <- addr) { toAddresses!(rest, done ++ [a], *reply) }
                }
              }
            }
          } |
          toAddresses!(publicKeys, [], *signersCh) |

          for (@address <- addressCh & @sysKey <- sysKeyCh &
               @signers <- signersCh) {
            @SystemVault!("findOrCreate", address, *foundCh) |
            for (@found <- foundCh) {
              match found {
                (true, systemVault) => {
                  counter!(0) | pending!({}) |

                  // (true, signer) when `auth` authorises `call`, else
                  // (false, "invalid auth"). Keys are compared, never
                  // called; unsealers are asked in order.
                  contract byKey(@auth, @left, reply) = {
                    match left {
                      [] => reply!(Nil)
                      [a ...rest] => {
                        if (auth == bundle0{(*owner, a)}) { reply!(("key", a)) }
                        else { byKey!(auth, rest, *reply) }
                      }
                    }
                  } |
                  contract bySealer(@auth, @left, @i, reply) = {
                    match left {
                      [] => reply!((false, Nil))
                      [u ...rest] => {
                        new opened in {
                          @u!(auth, *opened) |
                          for (@r <- opened) {
                            match r {
                              (true, value) => reply!((true, (i, value)))
                              _ => bySealer!(auth, rest, i + 1, *reply)
                            }
                          }
                        }
                      }
                    }
                  } |
                  contract verify(@auth, @call, reply) = {
                    new keyRet, sealRet in {
                      byKey!(auth, signers, *keyRet) |
                      for (@signer <- keyRet) {
                        if (signer != Nil) { reply!((true, signer)) }
                        else {
                          bySealer!(auth, unsealers, 0, *sealRet) |
                          for (@opened <- sealRet) {
                            match opened {
                              (true, (i, value)) => {
                                if (value == call) {
                                  reply!((true, ("unsealer", i)))
                                } else { reply!((false, "invalid auth")) }
                              }
                              _ => reply!((false, "invalid auth"))
                            }
                          }
                        }
                      }
                    }
                  } |

                  contract vault(@"balance", ret) = {
                    @systemVault!("balance", *ret)
                  } |

                  contract vault(@"transfer", @target, @amount, @auth, ret) = {
                    new checked, moved in {
                      verify!(auth, (bundle+{*vault}, target, amount, *ret),
                              *checked) |
                      for (@check <- checked) {
                        match check {
                          (true, signer) => {
                            for (@nonce <- counter & @open <- pending) {
                              counter!(nonce + 1) |
                              if (quorum == 1) {
                                pending!(open) |
                                @systemVault!("transfer", target, amount,
                                              sysKey, *moved) |
                                for (@result <- moved) {
                                  match result {
                                    (true, _) => ret!((true, (false, "done")))
                                    _ => ret!(result)
                                  }
                                }
                              } else {
                                pending!(open.set(nonce,
                                                  (target, amount, Set(signer)))) |
                                ret!((true, (true, nonce)))
                              }
                            }
                          }
                          _ => ret!(check)
                        }
                      }
                    }
                  } |

                  contract vault(@"confirm", @target, @amount, @auth, @nonce,
                                 ret) = {
                    new checked, moved in {
                      verify!(auth,
                              (bundle+{*vault}, target, amount, nonce, *ret),
                              *checked) |
                      for (@check <- checked) {
                        match check {
                          (true, signer) => {
                            for (@open <- pending) {
                              match open.get(nonce) {
                                (t, a, signed) => {
                                  if (t != target or a != amount) {
                                    pending!(open) |
                                    ret!((false,
                                          "given data does not match stored data"))
                                  } else {
                                    if (signed.contains(signer)) {
                                      pending!(open) |
                                      ret!((false, "already confirmed"))
                                    } else {
                                      if (signed.size() + 1 >= quorum) {
                                        pending!(open.delete(nonce)) |
                                        @systemVault!("transfer", target,
                                                      amount, sysKey, *moved) |
                                        for (@result <- moved) {
                                          match result {
                                            (true, _) => {
                                              ret!((true, (false, "done")))
                                            }
                                            _ => ret!(result)
                                          }
                                        }
                                      } else {
                                        pending!(open.set(nonce,
                                          (t, a, signed.add(signer)))) |
                                        ret!((true, (true, nonce)))
                                      }
                                    }
                                  }
                                }
                                _ => {
                                  pending!(open) |
                                  ret!((false, "inactive transaction nonce"))
                                }
                              }
                            }
                          }
                          _ => ret!(check)
                        }
                      }
                    }
                  } |

                  ret!((true, (bundle+{*vault}, address, systemVault)))
                }
                _ => ret!(found)
              }
            }
          }
        }
      }
    } |

    insertSigned!(
      "04fe2eb1e0e7462b1a8f64600389e1e76727f8b2d38804eaa4b48f7a7d6715130fc24d3c4dac2d8bdc19e0b49879dbaf07c30773cd9740a9d14a092ef76339207a".hexToBytes(),
      (9223372036854775807, bundle+{*MultiSigVault}),
      "304402201d9ecd4984f6fd7618dfe1dfa6753c662b2765f6e0b8819e63f37c65ba4c9175022067305a89ef93fd1726ecf31929d3306cdf29a7f8efa849fe6a336b499c67739c".hexToBytes(),
      *registered)
  }
}
)rho";

// TokenMetadata (rho:system:tokenMetadata): the native token's name,
// symbol and decimals, each by its method, and ("all", ret) as the triple.
// DeployHelperContracts fills in the $$...$$ fields from its TokenInfo.
constexpr std::string_view kTokenMetadata = R"rho(
new TokenMetadata, registered,
    insertSigned(`rho:registry:insertSigned:secp256k1`) in {
  contract TokenMetadata(@"name", ret) = { ret!("$$tokenName$$") } |
  contract TokenMetadata(@"symbol", ret) = { ret!("$$tokenSymbol$$") } |
  contract TokenMetadata(@"decimals", ret) = { ret!($$tokenDecimals$$) } |
  contract TokenMetadata(@"all", ret) = {
    ret!(("$$tokenName$$", "$$tokenSymbol$$", $$tokenDecimals$$))
  } |
  insertSigned!(
    "04856ecb339aa2462bc25f4d4d5f5e5317c58e366222bed85f488c576f423ff7136ba22c4198b1b7b8d5d2c61722b948fee9d8d8e10e468dc52b490d3393444fd0".hexToBytes(),
    (9223372036854775807, bundle+{*TokenMetadata}),
    "3044022065f630061a79b4ae846a705faf6c96dc3f97d90bb9f1dd1dec8d8581d27f50d902207d99a932eee9a9743bef7c7148db938c4ec34bdd4d99b1445db98bc0a61ec851".hexToBytes(),
    *registered)
}
)rho";

// The coop vault's deploy (CreateCoopVault fills in the keys and the
// quorum): the multi-signature vault's create, whose reply goes to a plain
// channel the installer empties at once.
constexpr std::string_view kCoopVault = R"rho(
new lookup(`rho:registry:lookup`), multiSigCh in {
  lookup!(`rho:vault:multiSig`, *multiSigCh) |
  for (@(_, MultiSigVault) <- multiSigCh) {
    @MultiSigVault!("create", [$$keys$$], [], $$quorum$$, "rnode:pos:coopVault")
  }
}
)rho";
constexpr std::string_view kCoopVaultChannel = "rnode:pos:coopVault";
// Any key: the deploy signs nothing.
constexpr std::string_view kCoopVaultDeployerKey =
    "0000000000000000000000000000000000000000000000000000000000000002";

constexpr HelperContract kHelpers[] = {
    // Any deployer: nothing it does is signed.
    {"TreeHashMap", "rho:lang:treeHashMap", "rho:lang:treeHashMap",
     "0000000000000000000000000000000000000000000000000000000000000001",
     1559156000000, kTreeHashMap},
    {"ListOps", "rho:lang:listOps", "",
     "867c21c6a3245865444d80e49cac08a1c11e23b35965b566bbe9f49bb9897511",
     1559156082324, kListOps},
    {"Either", "rho:lang:either", "",
     "5248f8913f8572d8227a3c7787b54bd8263389f7209adc1422e36bb2beb160dc",
     1559156217509, kEither},
    {"NonNegativeNumber", "rho:lang:nonNegativeNumber", "",
     "e33c9f1e925819d04733db4ec8539a84507c9e9abd32822059349449fe03997d",
     1559156251792, kNonNegativeNumber},
    {"AuthKey", "rho:system:authKey", "",
     "f450b26bac63e5dd9343cd46f5fae1986d367a893cd21eedd98a4cb3ac699abc",
     1559156356769, kAuthKey},
    {"Stack", "rho:lang:stack", "",
     "c94e647de6876c954ebb7b64c40a220227770f9be003635edfe3336a1a2c8605",
     1751539590099, kStack},
    {"MakeMint", "rho:system:makeMint", "",
     "de19d53f28d4cdee74bad062342d8486a90a652055f3de4b2efa5eb2fccc9d53",
     1559156452968, kMakeMint},
    {"MultiSigVault", "rho:vault:multiSig", "",
     "2a2eaa76d6fea9f502629e32b0f8eea19b9de8e2188ec0d589fcafa98fb1f031",
     1571408470880, kMultiSigVault},
    {"TokenMetadata", "rho:system:tokenMetadata", "",
     "8f9a1c3b2d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a",
     1737500000000, kTokenMetadata},
};

}  // namespace

std::span<const HelperContract> HelperContracts() { return kHelpers; }

absl::Status InstallLiteralEntry(const HelperContract& helper,
                                 rholang::interp::NativeSpace& space) {
  if (helper.literal_uri.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::optional<std::vector<rholang::ir::ParPtr>> exported,
                   space.Take(rholang::interp::StringPar(
                       std::string(kHelperExportChannel))));
  if (!exported.has_value() || exported->size() != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "helper contract ", std::string(helper.name), " exported nothing on \"",
        std::string(kHelperExportChannel), "\""));
  }
  return space.Put(RegistryEntryChannel(helper.literal_uri),
                   {std::move((*exported)[0])});
}

absl::StatusOr<rholang::interp::DeployInfo> SourceDeploy(
    std::string_view source, int64_t timestamp, std::string_view key_hex) {
  absl::StatusOr<crypto::Secp256k1PrivateKey> key = HexDecodeFixed<32>(key_hex);
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("deployer key: ", key.status().message()));
  }
  const crypto::Secp256k1PublicKey pk = crypto::Secp256k1PublicKeyOf(*key);
  rholang::interp::DeployInfo d;
  d.timestamp = timestamp;
  d.deployer_public_key.assign(pk.begin(), pk.end());
  const Hash32 id = crypto::Blake2b256(AsBytes(source));
  d.deploy_id.assign(id.begin(), id.end());
  return d;
}

absl::Status CheckTokenInfo(const TokenInfo& token) {
  auto plain = [](std::string_view text) {
    if (text.empty() || text.size() > kMaxTokenTextBytes) return false;
    for (char c : text) {
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
    }
    return true;
  };
  if (!plain(token.name) || !plain(token.symbol)) {
    return absl::InvalidArgumentError(
        absl::StrCat("token name and symbol: 1 to ", kMaxTokenTextBytes,
                     " printable ASCII characters without \" or \\"));
  }
  if (token.decimals < 0 || token.decimals > kMaxTokenDecimals) {
    return absl::InvalidArgumentError(
        absl::StrCat("token decimals: 0 to ", kMaxTokenDecimals));
  }
  return absl::OkStatus();
}

absl::Status DeployHelperContracts(rholang::interp::Runtime& runtime,
                                   rspace::Space& space,
                                   const rholang::interp::BlockInfo& block,
                                   const TokenInfo& token) {
  RETURN_IF_ERROR(CheckTokenInfo(token));
  // Far above what any helper spends: a bound only against one that loops.
  constexpr int64_t kPhloLimit = 1'000'000'000;
  for (const HelperContract& h : HelperContracts()) {
    absl::StatusOr<rholang::interp::DeployInfo> d =
        SourceDeploy(h.source, h.timestamp, h.deployer_key);
    if (!d.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "helper contract ", std::string(h.name), ": ", d.status().message()));
    }
    const std::string source = absl::StrReplaceAll(
        absl::string_view(h.source.data(), h.source.size()),
        {{"$$tokenName$$", token.name},
         {"$$tokenSymbol$$", token.symbol},
         {"$$tokenDecimals$$", absl::StrCat(token.decimals)}});
    rspace::EventLog log;
    rholang::interp::EvalResult r =
        runtime.EvaluateSource(source, *d, kPhloLimit, &log, &block);
    if (r.failed()) {
      return absl::InternalError(absl::StrCat("the helper contract ",
                                              std::string(h.name),
                                              " failed: ", r.error.message()));
    }
    rholang::interp::SpaceNative native(
        &space, rspace::OpContext{&log, &runtime.matcher()},
        /*meter=*/nullptr, runtime.channel_terms());
    RETURN_IF_ERROR(InstallLiteralEntry(h, native));
  }
  return absl::OkStatus();
}

absl::Status CreateCoopVault(rholang::interp::Runtime& runtime,
                             rspace::Space& space,
                             const rholang::interp::BlockInfo& block,
                             std::span<const Bytes> public_keys,
                             int64_t quorum) {
  if (public_keys.empty()) {
    return absl::InvalidArgumentError("coop vault: no public key");
  }
  if (quorum < 1 || quorum > static_cast<int64_t>(public_keys.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("coop vault: the quorum ", quorum, " is not in 1..",
                     public_keys.size(), " (the number of keys)"));
  }
  std::string keys;
  for (const Bytes& k : public_keys) {
    if (k.size() != 65) {
      return absl::InvalidArgumentError(
          "coop vault: a public key is not 65 bytes");
    }
    absl::StrAppend(&keys, keys.empty() ? "" : ", ", "\"", HexEncode(k),
                    "\".hexToBytes()");
  }
  const std::string source = absl::StrReplaceAll(
      absl::string_view(kCoopVault.data(), kCoopVault.size()),
      {{"$$keys$$", keys}, {"$$quorum$$", absl::StrCat(quorum)}});
  ASSIGN_OR_RETURN(
      rholang::interp::DeployInfo d,
      SourceDeploy(source, block.timestamp, kCoopVaultDeployerKey));
  constexpr int64_t kPhloLimit = 1'000'000'000;
  rspace::EventLog log;
  rholang::interp::EvalResult r =
      runtime.EvaluateSource(source, d, kPhloLimit, &log, &block);
  if (r.failed()) {
    return absl::InternalError(
        absl::StrCat("the coop vault's deploy failed: ", r.error.message()));
  }
  rholang::interp::SpaceNative native(
      &space, rspace::OpContext{&log, &runtime.matcher()},
      /*meter=*/nullptr, runtime.channel_terms());
  ASSIGN_OR_RETURN(
      std::optional<std::vector<rholang::ir::ParPtr>> reply,
      native.Take(rholang::interp::StringPar(std::string(kCoopVaultChannel))));
  // (true, (multiSigVault, address, systemVault)) or (false, reason).
  const rholang::ir::Expr* either =
      reply.has_value() && reply->size() == 1
          ? rholang::interp::SingleOfKind(*(*reply)[0],
                                          rholang::ir::ExprKind::kTuple)
          : nullptr;
  if (either == nullptr || either->operands.size() != 2) {
    return absl::FailedPreconditionError(
        "coop vault: the multi-signature vault did not reply");
  }
  const rholang::ir::Expr* ok = rholang::interp::SingleOfKind(
      *either->operands[0], rholang::ir::ExprKind::kBool);
  if (ok == nullptr || !ok->bool_value) {
    absl::StatusOr<std::string> why = rholang::Print(*either->operands[1]);
    return absl::FailedPreconditionError(
        absl::StrCat("coop vault: the multi-signature vault refused: ",
                     why.ok() ? *why : "(no reason)"));
  }
  return native.Put(CoopVaultChannel(), {either->operands[1]});
}

}  // namespace rnode::casper::contracts
