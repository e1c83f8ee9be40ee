// Immutable, shared values stored in the space: canonical bytes, their
// Blake2b-256 hash and an optional decoded form attached by the interpreter.
#ifndef RNODE_RSPACE_TERM_H_
#define RNODE_RSPACE_TERM_H_

#include <cstring>
#include <memory>
#include <utility>

#include "util/bytes.h"

namespace rnode::rspace {

class Term;
// Terms are shared by reference count and never mutated after creation, so a
// TermPtr may be read from any thread.
using TermPtr = std::shared_ptr<const Term>;

class Term {
 public:
  // Hashes `bytes` (Blake2b-256) once; `decoded` is the caller's parsed form
  // of the same value (opaque to RSpace, may be null).
  static TermPtr Make(Bytes bytes, std::shared_ptr<const void> decoded = {});
  // For callers that already hold the Blake2b-256 of `bytes`; the hash is
  // trusted, not checked.
  static TermPtr MakeWithHash(Bytes bytes, const Hash32& hash,
                              std::shared_ptr<const void> decoded = {});

  const Bytes& bytes() const { return bytes_; }
  const Hash32& hash() const { return hash_; }
  const std::shared_ptr<const void>& decoded() const { return decoded_; }

  Term(Bytes bytes, const Hash32& hash, std::shared_ptr<const void> decoded)
      : bytes_(std::move(bytes)), hash_(hash), decoded_(std::move(decoded)) {}

 private:
  Bytes bytes_;
  Hash32 hash_;
  std::shared_ptr<const void> decoded_;
};

// The shared Hash32 hash functor (util/bytes.h), under the name RSpace code
// uses.
using Hash32Hasher = ::rnode::Hash32Hasher;

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_TERM_H_
