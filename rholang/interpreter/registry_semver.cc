// Versions, patterns and versioned URNs (see registry_semver.h).
#include "rholang/interpreter/registry_semver.h"

#include <limits>
#include <vector>

namespace rnode::rholang::interp {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

// A version component: an optional '+', then one or more decimal digits,
// value below 2^32 (the public node parses it as an unsigned 32-bit int).
std::optional<uint32_t> ParseComponent(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  }
  return static_cast<uint32_t>(v);
}

bool HasStar(std::span<const std::string_view> parts) {
  for (std::string_view p : parts) {
    if (p == "*") return true;
  }
  return false;
}

}  // namespace

std::string SemVersion::ToString() const {
  std::string out = std::to_string(major) + "." + std::to_string(minor) + "." +
                    std::to_string(patch);
  if (pre) out += "-" + *pre;
  return out;
}

int CompareVersions(const SemVersion& a, const SemVersion& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  if (!a.pre && !b.pre) return 0;
  if (!a.pre) return 1;
  if (!b.pre) return -1;
  int c = a.pre->compare(*b.pre);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

bool VersionPattern::Matches(const SemVersion& v) const {
  switch (kind) {
    case Kind::kExact:
      return CompareVersions(v, exact) == 0;
    case Kind::kPatchWild:
      return !v.pre && v.major == major && v.minor == minor;
    case Kind::kMinorWild:
      return !v.pre && v.major == major;
    case Kind::kMajorWild:
      return !v.pre;
  }
  return false;
}

std::optional<SemVersion> ParseSemVersion(std::string_view s) {
  if (s.empty()) return std::nullopt;
  SemVersion v;
  std::string_view core = s;
  if (size_t dash = s.find('-'); dash != std::string_view::npos) {
    if (dash + 1 == s.size()) return std::nullopt;
    core = s.substr(0, dash);
    v.pre = std::string(s.substr(dash + 1));
  }
  std::vector<std::string_view> parts = Split(core, '.');
  if (parts.size() != 3) return std::nullopt;
  std::optional<uint32_t> major = ParseComponent(parts[0]);
  std::optional<uint32_t> minor = ParseComponent(parts[1]);
  std::optional<uint32_t> patch = ParseComponent(parts[2]);
  if (!major || !minor || !patch) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  v.patch = *patch;
  return v;
}

std::optional<VersionPattern> ParseVersionPattern(std::string_view s) {
  if (s.empty()) return std::nullopt;
  VersionPattern p;
  if (s == "*") {
    p.kind = VersionPattern::Kind::kMajorWild;
    return p;
  }
  if (s.find('*') != std::string_view::npos &&
      s.find('-') != std::string_view::npos) {
    return std::nullopt;
  }
  std::vector<std::string_view> parts = Split(s, '.');
  if (parts.size() == 2 && parts[1] == "*") {
    std::optional<uint32_t> major = ParseComponent(parts[0]);
    if (!major) return std::nullopt;
    p.kind = VersionPattern::Kind::kMinorWild;
    p.major = *major;
    return p;
  }
  if (parts.size() == 3 && parts[2] == "*") {
    std::optional<uint32_t> major = ParseComponent(parts[0]);
    std::optional<uint32_t> minor = ParseComponent(parts[1]);
    if (!major || !minor) return std::nullopt;
    p.kind = VersionPattern::Kind::kPatchWild;
    p.major = *major;
    p.minor = *minor;
    return p;
  }
  if (parts.size() != 3 || HasStar(parts)) return std::nullopt;
  std::optional<SemVersion> exact = ParseSemVersion(s);
  if (!exact) return std::nullopt;
  p.kind = VersionPattern::Kind::kExact;
  p.exact = *std::move(exact);
  return p;
}

std::optional<SemVersion> BestMatch(const VersionPattern& pattern,
                                    std::span<const SemVersion> candidates) {
  const SemVersion* best = nullptr;
  for (const SemVersion& v : candidates) {
    if (!pattern.Matches(v)) continue;
    if (best == nullptr || CompareVersions(v, *best) >= 0) best = &v;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::optional<VersionedUrn> ParseVersionedUrn(std::string_view urn) {
  constexpr std::string_view kScheme = "rho:";
  if (urn.substr(0, kScheme.size()) != kScheme) return std::nullopt;
  std::vector<std::string_view> parts = Split(urn.substr(kScheme.size()), ':');
  for (std::string_view part : parts) {
    if (part.empty()) return std::nullopt;
  }
  VersionedUrn out;
  if (parts.size() == 2 && parts[0] == "registry") {
    out.ns = "registry";
    out.service_version = std::string(parts[1]);
    return out;
  }
  if (parts.size() == 5 && (parts[0] == "lib" || parts[0] == "serve")) {
    out.ns = std::string(parts[0]);
    out.service_version = std::string(parts[1]);
    out.public_key = std::string(parts[2]);
    out.project_id = std::string(parts[3]);
    out.project_version = std::string(parts[4]);
    return out;
  }
  return std::nullopt;
}

}  // namespace rnode::rholang::interp
