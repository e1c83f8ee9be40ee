// What kind of host a host string names, for settings and peers' addresses:
// an IPv4 address, an IPv6 address (bare or in brackets, IPv4-mapped
// included) or a name. Names are not resolved: "localhost" and its
// subdomains count as loopback, any other name as public.
#ifndef RNODE_UTIL_HOST_ADDRESS_H_
#define RNODE_UTIL_HOST_ADDRESS_H_

#include <string_view>

namespace rnode {

// 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104, "localhost", "*.localhost".
bool IsLoopbackHost(std::string_view host);

// Loopback, the unspecified address (0.0.0.0/8, ::), 10/8, 172.16/12,
// 192.168/16, 169.254/16 (link-local), fc00::/7 and fe80::/10, and
// IPv4-mapped forms of those: a host that is not reachable from the
// internet, or not a host at all.
bool IsPrivateHost(std::string_view host);

}  // namespace rnode

#endif  // RNODE_UTIL_HOST_ADDRESS_H_
