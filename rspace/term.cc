// Term construction.
#include "rspace/term.h"

#include "crypto/hash.h"

namespace rnode::rspace {

TermPtr Term::Make(Bytes bytes, std::shared_ptr<const void> decoded) {
  Hash32 h = crypto::Blake2b256(bytes);
  return std::make_shared<const Term>(std::move(bytes), h, std::move(decoded));
}

TermPtr Term::MakeWithHash(Bytes bytes, const Hash32& hash,
                           std::shared_ptr<const void> decoded) {
  return std::make_shared<const Term>(std::move(bytes), hash,
                                      std::move(decoded));
}

}  // namespace rnode::rspace
