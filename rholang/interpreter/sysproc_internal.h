// Private helpers shared by system_processes.cc (the standard processes
// and the tables) and test_processes.cc (the RhoSpec test processes). Not
// part of the library API.
#ifndef RNODE_RHOLANG_INTERPRETER_SYSPROC_INTERNAL_H_
#define RNODE_RHOLANG_INTERPRETER_SYSPROC_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/system_processes.h"

namespace rnode::rholang::interp::sysproc_internal {

// ---------------------------------------------------------------------------
// Costs (docs/system_processes.md, "Costs"). Ours, not the public node's
// (which charges nothing inside a handler); they only need to be
// deterministic and roughly proportional to the work.

// Every call: checking the arguments and building the reply, priced like the
// one send a reply is.
inline constexpr int64_t kCallCost = cost::kSend;
// One hash invocation (state setup and finalisation) on top of
// cost::kPerByte per input byte.
inline constexpr int64_t kHashBase = 10;
// One signature verification (two scalar multiplications): about 50 us,
// the time to hash some 15 KB; priced well below that ratio so that a
// verify-and-transfer deploy stays within ordinary phlo limits.
inline constexpr int64_t kSignatureVerify = 1000;
// A REV address: three hashes of at most 65 bytes, plus 100 for the base58
// encoding (quadratic: about 40 x 55 digit steps).
inline constexpr int64_t kAddressDerivation = 3 * kHashBase + 100;

// absl::StrCat takes absl::string_view, which is not std::string_view here.
inline absl::string_view Sv(std::string_view s) { return {s.data(), s.size()}; }

// Prints `p` as the stdout processes do and charges per byte printed. The
// text is produced and charged whether or not a sink is attached, so the
// cost never depends on the node's configuration. A term the printer
// refuses prints as a placeholder: printing never fails a deploy (nor does
// it in the public node). The meter's error when the charge fails.
absl::StatusOr<std::string> Render(const ir::Par& p, ProcessContext& ctx);

enum class Stream { kOut, kErr };

// Writes `line` to ctx.output's `stream` (nothing without a sink).
void Emit(ProcessContext& ctx, Stream stream, std::string_view line);

// A table entry for `uri` on fixed channel `byte`.
inline SystemProcessDef Def(const char* uri, uint8_t byte, uint32_t body_ref,
                            uint32_t arity, ProcessHandler handler) {
  return SystemProcessDef{uri, byte, body_ref, arity, std::move(handler)};
}

// The test processes' table (test_processes.cc).
std::vector<SystemProcessDef> MakeTest();

}  // namespace rnode::rholang::interp::sysproc_internal

#endif  // RNODE_RHOLANG_INTERPRETER_SYSPROC_INTERNAL_H_
