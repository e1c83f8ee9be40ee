#include "casper/contracts/helper_contracts.h"

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

constexpr HelperContract kHelpers[] = {
    {"ListOps", "rho:lang:listOps",
     "867c21c6a3245865444d80e49cac08a1c11e23b35965b566bbe9f49bb9897511",
     1559156082324, kListOps},
};

}  // namespace

std::span<const HelperContract> HelperContracts() { return kHelpers; }

}  // namespace rnode::casper::contracts
