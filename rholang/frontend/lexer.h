// Rholang lexer: source bytes to a token vector with positions.
#ifndef RNODE_RHOLANG_LEXER_H_
#define RNODE_RHOLANG_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rholang/frontend/ast.h"

namespace rnode::rholang {

enum class Tok : uint8_t {
  kEof,
  kIdent,
  kInt,        // int_magnitude holds the unsigned value (may be 2^63)
  kString,     // value holds the unescaped string
  kUri,        // value holds the text between backticks
  kBadNumber,  // a numeric literal of an unsupported type (1.5, 10n, 3f64)
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kComma,
  kSemi,
  kColon,
  kDot,
  kBar,
  kAmp,
  kBarBar,        // ||
  kAmpAmp,        // &&
  kBang,          // !
  kBangBang,      // !!
  kBangQuestion,  // !?
  kQuestionBang,  // ?!
  kLArrow,        // <-
  kPeekArrow,     // <<-
  kLt,
  kLe,  // <= (also the persistent bind arrow)
  kGt,
  kGe,
  kEqEq,
  kNeq,
  kFatArrow,  // =>
  kEq,        // =
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kPlusPlus,
  kMinusMinus,
  kPercentPercent,
  kAt,
  kEllipsis,
  kConj,  // /\ .
  kDisj,  // \/ .
  kTilde,
  kWildcard,  // _
  // Keywords.
  kNew,
  kIn,
  kContract,
  kFor,
  kMatch,
  kIf,
  kElse,
  kLet,
  kBundle,
  kBundlePlus,
  kBundleMinus,
  kBundleZero,
  kNil,
  kTrue,
  kFalse,
  kNot,
  kAnd,
  kOr,
  kMatches,
  kSet,
  kTypeBool,
  kTypeInt,
  kTypeString,
  kTypeUri,
  kTypeByteArray,
  kSelect,
  kWhere,
};

struct Token {
  Tok kind = Tok::kEof;
  ast::Pos pos;
  std::string_view text;  // the raw source bytes of the token
  std::string value;      // kString / kUri contents
  uint64_t int_magnitude = 0;
};

// Human-readable token description for error messages ("`=>`", "integer").
std::string TokDescription(Tok kind);

// Splits `source` into tokens ending with one kEof token. Comments (`//` to
// end of line, `/* */`) and whitespace are skipped. Fails with
// kInvalidArgument and a Diagnostic (see diagnostic.h) at the offending
// position for an unterminated string, URI or comment, a bad escape, an
// unexpected byte or an integer above 2^63; kResourceExhausted when the
// source exceeds kMaxSourceBytes. Tokens view into `source`, which must
// outlive them. Thread-safe (pure).
absl::StatusOr<std::vector<Token>> Lex(std::string_view source);

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_LEXER_H_
