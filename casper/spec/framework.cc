// The default spec framework: our own Rholang implementation of the
// RhoSpec interface that the public contract test files use
// (docs/spec-runner.md "The framework").
#include "casper/spec/spec_runner.h"

namespace rnode::casper::spec {

// Registered at kFrameworkUri through the published signed insertion (the
// registry checks `sig` over (deploy timestamp, key, nonce), so the
// registering deploy runs at kFrameworkTimestamp). Cases run one after
// another; each attempt calls setup, the body and teardown in turn, and every
// assertion goes to rho:test:assertAck, which prints the verdict line the
// runner reads.
const std::string_view kDefaultFramework = R"rho(
new Spec, registered,
    insertSigned(`rho:registry:insertSigned:secp256k1`),
    assertAck(`rho:test:assertAck`),
    suiteDone(`rho:test:testSuiteCompleted`) in {

  // ("testSuite", cases), ("testSuite", setup, cases) and
  // ("testSuite", setup, teardown, cases): the missing steps do nothing.
  contract Spec(@"testSuite", @cases) = {
    new noSetup in {
      contract noSetup(_, reply) = { reply!(Nil) } |
      Spec!("testSuite", *noSetup, cases)
    }
  } |
  contract Spec(@"testSuite", setup, @cases) = {
    new noTeardown in {
      contract noTeardown(_, _, ack) = { ack!(Nil) } |
      Spec!("testSuite", *setup, *noTeardown, cases)
    }
  } |
  contract Spec(@"testSuite", setup, teardown, @cases) = {
    new nextCase, attemptCase in {
      // A case is (name, body) or (name, body, attempts).
      contract nextCase(@left) = {
        match left {
          [] => suiteDone!(true)
          [(name, body) ...rest] => attemptCase!(name, body, 1, 1, rest)
          [(name, body, attempts) ...rest] =>
            attemptCase!(name, body, 1, attempts, rest)
        }
      } |
      contract attemptCase(@name, @body, @attempt, @attempts, @rest) = {
        if (attempt > attempts) { nextCase!(rest) } else {
          new checker, check, setupReply, bodyDone, teardownDone in {
            // An assertion read from a channel first, or given whole.
            contract check(@assertion, @clue, ack) = {
              match assertion {
                ("nothing <-", source) => for ( <- @source) {
                  assertAck!(name, attempt, true, clue, *ack)
                }
                (expected, "== <-", source) => for (@got <- @source) {
                  assertAck!(name, attempt, (expected, "==", got), clue, *ack)
                }
                (unexpected, "!= <-", source) => for (@got <- @source) {
                  assertAck!(name, attempt, (unexpected, "!=", got), clue, *ack)
                }
                _ => assertAck!(name, attempt, assertion, clue, *ack)
              }
            } |
            contract checker(@"assert", @assertion, @clue, ack) = {
              check!(assertion, clue, *ack)
            } |
            // Stops at the first assertion that does not hold.
            contract checker(@"assertMany", @list, ack) = {
              match list {
                [] => ack!(true)
                [(assertion, clue) ...more] => {
                  new held in {
                    check!(assertion, clue, *held) |
                    for (@ok <- held) {
                      if (ok) { checker!("assertMany", more, *ack) }
                      else { ack!(false) }
                    }
                  }
                }
              }
            } |
            setup!(name, bundle+{*setupReply}) |
            for (@state <- setupReply) {
              @body!(*checker, state, *bodyDone) |
              for (_ <- bodyDone) {
                teardown!(name, state, *teardownDone) |
                for (_ <- teardownDone) {
                  attemptCase!(name, body, attempt + 1, attempts, rest)
                }
              }
            }
          }
        }
      } |
      nextCase!(cases)
    }
  } |

  insertSigned!(
    "0401f5d998c9be9b1a753771920c6e968def63fe95b20c71a163a7f7311b6131ac65a49f796b5947fa9d94b0542895e7b7ebe8b91eefcbc5c7604aaf281922ccac".hexToBytes(),
    (9223372036854775807, bundle+{*Spec}),
    "304402206a01410c0195c7dd9980759738e7aed12264f252e91a8908d58ae787b7e0e18e0220526fe68e98b405c6d4ad9388d884da23058b1d6f45a054fea1008252b4ff4e5d".hexToBytes(),
    *registered)
}
)rho";

}  // namespace rnode::casper::spec
