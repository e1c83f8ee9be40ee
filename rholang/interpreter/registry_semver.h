// Versions, version patterns and versioned URNs of the versioned registry
// (rho:registry:ops:1.0.0), with the public node's exact acceptance rules
// because their results are replies that end up in state.
//
//   version  M.m.p or M.m.p-pre  (components: an optional '+' then decimal
//            digits, at most 2^32 - 1; `pre` is everything after the first
//            '-', non-empty)
//   pattern  "*" | M.* | M.m.* | an exact version; a pattern holding '*'
//            may not hold '-'
//   URN      rho:registry:<ver> | rho:lib:<ver>:<pk>:<project>:<ver>
//            | rho:serve:<ver>:<pk>:<project>:<ver> (no empty segment)
#ifndef RNODE_RHOLANG_INTERPRETER_REGISTRY_SEMVER_H_
#define RNODE_RHOLANG_INTERPRETER_REGISTRY_SEMVER_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rnode::rholang::interp {

struct SemVersion {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t patch = 0;
  std::optional<std::string> pre;  // set for a prerelease

  // "M.m.p" or "M.m.p-pre" (components without '+' or leading zeros).
  std::string ToString() const;
};

// Semver order: major, minor, patch, then a release above its prereleases,
// then prerelease tags bytewise. Returns <0, 0, >0.
int CompareVersions(const SemVersion& a, const SemVersion& b);

struct VersionPattern {
  enum class Kind { kExact, kPatchWild, kMinorWild, kMajorWild };
  Kind kind = Kind::kMajorWild;
  SemVersion exact;    // kExact
  uint32_t major = 0;  // kPatchWild, kMinorWild
  uint32_t minor = 0;  // kPatchWild

  // Wildcards never match a prerelease; an exact pattern matches exactly.
  bool Matches(const SemVersion& v) const;
};

// nullopt on any malformed input.
std::optional<SemVersion> ParseSemVersion(std::string_view s);
std::optional<VersionPattern> ParseVersionPattern(std::string_view s);

// The highest version in `candidates` that `pattern` matches, if any.
std::optional<SemVersion> BestMatch(const VersionPattern& pattern,
                                    std::span<const SemVersion> candidates);

struct VersionedUrn {
  std::string ns;  // "registry", "lib" or "serve"
  std::string service_version;
  // Set for lib / serve only.
  std::optional<std::string> public_key;
  std::optional<std::string> project_id;
  std::optional<std::string> project_version;
};

// nullopt unless `urn` has one of the three shapes above.
std::optional<VersionedUrn> ParseVersionedUrn(std::string_view urn);

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_REGISTRY_SEMVER_H_
