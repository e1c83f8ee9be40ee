// The genesis parameters the casper tests start from.
#ifndef RNODE_TESTS_CASPER_TEST_GENESIS_H_
#define RNODE_TESTS_CASPER_TEST_GENESIS_H_

#include <cstdint>

#include "casper/genesis/genesis.h"
#include "tests/casper/test_key.h"

namespace rnode::casper::testing {

// MakeTestKey(1..validators) bonded with 1000 each; the wallets of
// MakeTestKey(1..funded) holding `funds` each.
inline genesis::GenesisParams TestGenesisParams(int validators, int funded,
                                                int64_t funds) {
  genesis::GenesisParams p;
  for (int i = 1; i <= validators; ++i) {
    genesis::Bond b;
    b.validator = MakeTestKey(static_cast<uint8_t>(i)).pk;
    b.stake = 1000;
    p.bonds.push_back(b);
  }
  for (int i = 1; i <= funded; ++i) {
    genesis::Wallet w;
    w.address = MakeTestKey(static_cast<uint8_t>(i)).address;
    w.balance = funds;
    p.wallets.push_back(w);
  }
  return p;
}

}  // namespace rnode::casper::testing

#endif  // RNODE_TESTS_CASPER_TEST_GENESIS_H_
