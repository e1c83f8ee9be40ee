// Rholang lexer: source bytes to tokens with 1-based line/column positions.
#include "rholang/frontend/lexer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/limits.h"

namespace rnode::rholang {
namespace {

struct Keyword {
  std::string_view text;
  Tok kind;
};

constexpr Keyword kKeywords[] = {
    {"new", Tok::kNew},
    {"in", Tok::kIn},
    {"contract", Tok::kContract},
    {"for", Tok::kFor},
    {"match", Tok::kMatch},
    {"if", Tok::kIf},
    {"else", Tok::kElse},
    {"let", Tok::kLet},
    {"bundle", Tok::kBundle},
    {"bundle0", Tok::kBundleZero},
    {"Nil", Tok::kNil},
    {"true", Tok::kTrue},
    {"false", Tok::kFalse},
    {"not", Tok::kNot},
    {"and", Tok::kAnd},
    {"or", Tok::kOr},
    {"matches", Tok::kMatches},
    {"Set", Tok::kSet},
    {"Bool", Tok::kTypeBool},
    {"Int", Tok::kTypeInt},
    {"String", Tok::kTypeString},
    {"Uri", Tok::kTypeUri},
    {"ByteArray", Tok::kTypeByteArray},
    {"select", Tok::kSelect},
    {"where", Tok::kWhere},
};

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentChar(char c) {
  return IsIdentStart(c) || (c >= '0' && c <= '9') || c == '\'';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> out;
    // Real programs average well over four bytes per token.
    out.reserve(src_.size() / 4 + 16);
    while (true) {
      absl::Status st = SkipSpaceAndComments();
      if (!st.ok()) return st;
      Token tok;
      tok.pos = {line_, col_};
      size_t start = i_;
      if (i_ >= src_.size()) {
        tok.kind = Tok::kEof;
        out.push_back(std::move(tok));
        return out;
      }
      st = Next(tok);
      if (!st.ok()) return st;
      tok.text = src_.substr(start, i_ - start);
      out.push_back(std::move(tok));
    }
  }

 private:
  char Peek(size_t ahead = 0) const {
    return i_ + ahead < src_.size() ? src_[i_ + ahead] : '\0';
  }
  void Advance(size_t n = 1) {
    for (size_t k = 0; k < n && i_ < src_.size(); ++k) {
      if (src_[i_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
      ++i_;
    }
  }
  absl::Status Error(ast::Pos pos, std::string msg) const {
    return DiagnosticError(absl::StatusCode::kInvalidArgument, pos.line,
                           pos.col, std::move(msg));
  }

  absl::Status SkipSpaceAndComments() {
    while (i_ < src_.size()) {
      char c = src_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
          c == '\v') {
        Advance();
      } else if (c == '/' && Peek(1) == '/') {
        while (i_ < src_.size() && src_[i_] != '\n') Advance();
      } else if (c == '/' && Peek(1) == '*') {
        ast::Pos start{line_, col_};
        Advance(2);
        while (true) {
          if (i_ >= src_.size()) {
            return Error(start, "unterminated block comment");
          }
          if (src_[i_] == '*' && Peek(1) == '/') {
            Advance(2);
            break;
          }
          Advance();
        }
      } else {
        break;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Next(Token& tok) {
    char c = Peek();
    if (IsIdentStart(c)) return Identifier(tok);
    if (IsDigit(c)) return Number(tok);
    if (c == '"') return String(tok);
    if (c == '`') return Uri(tok);
    auto two = [&](char a, char b) { return c == a && Peek(1) == b; };
    auto set = [&](Tok k, size_t n) {
      tok.kind = k;
      Advance(n);
      return absl::OkStatus();
    };
    if (c == '<' && Peek(1) == '<' && Peek(2) == '-') {
      return set(Tok::kPeekArrow, 3);
    }
    if (c == '.' && Peek(1) == '.' && Peek(2) == '.') {
      return set(Tok::kEllipsis, 3);
    }
    if (two('!', '!')) return set(Tok::kBangBang, 2);
    if (two('!', '?')) return set(Tok::kBangQuestion, 2);
    if (two('!', '=')) return set(Tok::kNeq, 2);
    if (two('?', '!')) return set(Tok::kQuestionBang, 2);
    if (two('<', '-')) return set(Tok::kLArrow, 2);
    if (two('<', '=')) return set(Tok::kLe, 2);
    if (two('>', '=')) return set(Tok::kGe, 2);
    if (two('=', '=')) return set(Tok::kEqEq, 2);
    if (two('=', '>')) return set(Tok::kFatArrow, 2);
    if (two('+', '+')) return set(Tok::kPlusPlus, 2);
    if (two('-', '-')) return set(Tok::kMinusMinus, 2);
    if (two('%', '%')) return set(Tok::kPercentPercent, 2);
    if (two('/', '\\')) return set(Tok::kConj, 2);
    if (two('\\', '/')) return set(Tok::kDisj, 2);
    if (two('|', '|')) return set(Tok::kBarBar, 2);
    if (two('&', '&')) return set(Tok::kAmpAmp, 2);
    switch (c) {
      case '(':
        return set(Tok::kLParen, 1);
      case ')':
        return set(Tok::kRParen, 1);
      case '[':
        return set(Tok::kLBracket, 1);
      case ']':
        return set(Tok::kRBracket, 1);
      case '{':
        return set(Tok::kLBrace, 1);
      case '}':
        return set(Tok::kRBrace, 1);
      case ',':
        return set(Tok::kComma, 1);
      case ';':
        return set(Tok::kSemi, 1);
      case ':':
        return set(Tok::kColon, 1);
      case '.':
        return set(Tok::kDot, 1);
      case '|':
        return set(Tok::kBar, 1);
      case '&':
        return set(Tok::kAmp, 1);
      case '!':
        return set(Tok::kBang, 1);
      case '<':
        return set(Tok::kLt, 1);
      case '>':
        return set(Tok::kGt, 1);
      case '=':
        return set(Tok::kEq, 1);
      case '+':
        return set(Tok::kPlus, 1);
      case '-':
        return set(Tok::kMinus, 1);
      case '*':
        return set(Tok::kStar, 1);
      case '/':
        return set(Tok::kSlash, 1);
      case '%':
        return set(Tok::kPercent, 1);
      case '@':
        return set(Tok::kAt, 1);
      case '~':
        return set(Tok::kTilde, 1);
      default:
        break;
    }
    unsigned char uc = static_cast<unsigned char>(c);
    if (uc >= 0x20 && uc < 0x7F) {
      return Error({line_, col_}, absl::StrCat("unexpected character '",
                                               std::string(1, c), "'"));
    }
    return Error({line_, col_}, absl::StrCat("unexpected byte 0x",
                                             absl::Hex(uc, absl::kZeroPad2)));
  }

  absl::Status Identifier(Token& tok) {
    size_t start = i_;
    while (i_ < src_.size() && IsIdentChar(src_[i_])) Advance();
    std::string_view word = src_.substr(start, i_ - start);
    if (word == "_") {
      tok.kind = Tok::kWildcard;
      return absl::OkStatus();
    }
    tok.kind = Tok::kIdent;
    for (const Keyword& k : kKeywords) {
      if (k.text == word) {
        tok.kind = k.kind;
        break;
      }
    }
    if (tok.kind == Tok::kBundle) {
      char n = Peek();
      if (n == '+') {
        tok.kind = Tok::kBundlePlus;
        Advance();
      } else if (n == '-') {
        tok.kind = Tok::kBundleMinus;
        Advance();
      } else if (n == '0') {
        tok.kind = Tok::kBundleZero;
        Advance();
      }
    }
    return absl::OkStatus();
  }

  absl::Status Number(Token& tok) {
    ast::Pos pos{line_, col_};
    constexpr uint64_t kLimit = uint64_t{1} << 63;
    uint64_t value = 0;
    bool overflow = false;
    while (IsDigit(Peek())) {
      uint64_t d = static_cast<uint64_t>(Peek() - '0');
      if (value > (kLimit - d) / 10) overflow = true;
      if (!overflow) value = value * 10 + d;
      Advance();
    }
    bool bad = false;
    if (Peek() == '.' && IsDigit(Peek(1))) {
      bad = true;
      Advance();
      while (IsDigit(Peek())) Advance();
    }
    if (IsIdentChar(Peek())) {
      bad = true;
      while (IsIdentChar(Peek())) Advance();
    }
    if (bad) {
      tok.kind = Tok::kBadNumber;
      return absl::OkStatus();
    }
    if (overflow) {
      return Error(pos, "integer literal out of the 64-bit range");
    }
    tok.kind = Tok::kInt;
    tok.int_magnitude = value;
    return absl::OkStatus();
  }

  absl::Status String(Token& tok) {
    ast::Pos start{line_, col_};
    Advance();
    std::string value;
    while (true) {
      if (i_ >= src_.size()) return Error(start, "unterminated string");
      char c = src_[i_];
      if (c == '"') {
        Advance();
        break;
      }
      if (c != '\\') {
        value.push_back(c);
        Advance();
        continue;
      }
      ast::Pos esc{line_, col_};
      char e = Peek(1);
      Advance(2);
      switch (e) {
        case '"':
          value.push_back('"');
          break;
        case '\\':
          value.push_back('\\');
          break;
        case '\'':
          value.push_back('\'');
          break;
        case 'n':
          value.push_back('\n');
          break;
        case 't':
          value.push_back('\t');
          break;
        case 'r':
          value.push_back('\r');
          break;
        case 'b':
          value.push_back('\b');
          break;
        case 'f':
          value.push_back('\f');
          break;
        case 'u': {
          uint32_t cp = 0;
          for (int k = 0; k < 4; ++k) {
            int h = HexValue(Peek());
            if (h < 0) return Error(esc, "\\u escape needs four hex digits");
            cp = cp * 16 + static_cast<uint32_t>(h);
            Advance();
          }
          AppendUtf8(cp, value);
          break;
        }
        default:
          if (e == '\0' && i_ >= src_.size()) {
            return Error(start, "unterminated string");
          }
          return Error(esc, "unknown escape sequence in string");
      }
    }
    tok.kind = Tok::kString;
    tok.value = std::move(value);
    return absl::OkStatus();
  }

  absl::Status Uri(Token& tok) {
    ast::Pos start{line_, col_};
    Advance();
    size_t begin = i_;
    while (i_ < src_.size() && src_[i_] != '`') {
      if (src_[i_] == '\n') return Error(start, "unterminated URI literal");
      Advance();
    }
    if (i_ >= src_.size()) return Error(start, "unterminated URI literal");
    tok.kind = Tok::kUri;
    tok.value = std::string(src_.substr(begin, i_ - begin));
    Advance();
    return absl::OkStatus();
  }

  std::string_view src_;
  size_t i_ = 0;
  uint32_t line_ = 1;
  uint32_t col_ = 1;
};

}  // namespace

std::string TokDescription(Tok kind) {
  switch (kind) {
    case Tok::kEof:
      return "end of input";
    case Tok::kIdent:
      return "identifier";
    case Tok::kInt:
      return "integer";
    case Tok::kString:
      return "string";
    case Tok::kUri:
      return "URI";
    case Tok::kBadNumber:
      return "numeric literal";
    case Tok::kLParen:
      return "`(`";
    case Tok::kRParen:
      return "`)`";
    case Tok::kLBracket:
      return "`[`";
    case Tok::kRBracket:
      return "`]`";
    case Tok::kLBrace:
      return "`{`";
    case Tok::kRBrace:
      return "`}`";
    case Tok::kComma:
      return "`,`";
    case Tok::kSemi:
      return "`;`";
    case Tok::kColon:
      return "`:`";
    case Tok::kDot:
      return "`.`";
    case Tok::kBar:
      return "`|`";
    case Tok::kAmp:
      return "`&`";
    case Tok::kBarBar:
      return "`||`";
    case Tok::kAmpAmp:
      return "`&&`";
    case Tok::kBang:
      return "`!`";
    case Tok::kBangBang:
      return "`!!`";
    case Tok::kBangQuestion:
      return "`!?`";
    case Tok::kQuestionBang:
      return "`?!`";
    case Tok::kLArrow:
      return "`<-`";
    case Tok::kPeekArrow:
      return "`<<-`";
    case Tok::kLt:
      return "`<`";
    case Tok::kLe:
      return "`<=`";
    case Tok::kGt:
      return "`>`";
    case Tok::kGe:
      return "`>=`";
    case Tok::kEqEq:
      return "`==`";
    case Tok::kNeq:
      return "`!=`";
    case Tok::kFatArrow:
      return "`=>`";
    case Tok::kEq:
      return "`=`";
    case Tok::kPlus:
      return "`+`";
    case Tok::kMinus:
      return "`-`";
    case Tok::kStar:
      return "`*`";
    case Tok::kSlash:
      return "`/`";
    case Tok::kPercent:
      return "`%`";
    case Tok::kPlusPlus:
      return "`++`";
    case Tok::kMinusMinus:
      return "`--`";
    case Tok::kPercentPercent:
      return "`%%`";
    case Tok::kAt:
      return "`@`";
    case Tok::kEllipsis:
      return "`...`";
    case Tok::kConj:
      return "`/\\`";
    case Tok::kDisj:
      return "`\\/`";
    case Tok::kTilde:
      return "`~`";
    case Tok::kWildcard:
      return "`_`";
    case Tok::kNew:
      return "`new`";
    case Tok::kIn:
      return "`in`";
    case Tok::kContract:
      return "`contract`";
    case Tok::kFor:
      return "`for`";
    case Tok::kMatch:
      return "`match`";
    case Tok::kIf:
      return "`if`";
    case Tok::kElse:
      return "`else`";
    case Tok::kLet:
      return "`let`";
    case Tok::kBundle:
      return "`bundle`";
    case Tok::kBundlePlus:
      return "`bundle+`";
    case Tok::kBundleMinus:
      return "`bundle-`";
    case Tok::kBundleZero:
      return "`bundle0`";
    case Tok::kNil:
      return "`Nil`";
    case Tok::kTrue:
      return "`true`";
    case Tok::kFalse:
      return "`false`";
    case Tok::kNot:
      return "`not`";
    case Tok::kAnd:
      return "`and`";
    case Tok::kOr:
      return "`or`";
    case Tok::kMatches:
      return "`matches`";
    case Tok::kSet:
      return "`Set`";
    case Tok::kTypeBool:
      return "`Bool`";
    case Tok::kTypeInt:
      return "`Int`";
    case Tok::kTypeString:
      return "`String`";
    case Tok::kTypeUri:
      return "`Uri`";
    case Tok::kTypeByteArray:
      return "`ByteArray`";
    case Tok::kSelect:
      return "`select`";
    case Tok::kWhere:
      return "`where`";
  }
  return "token";
}

absl::StatusOr<std::vector<Token>> Lex(std::string_view source) {
  if (source.size() > kMaxSourceBytes) {
    return DiagnosticError(
        absl::StatusCode::kResourceExhausted, 1, 1,
        absl::StrCat("source is ", source.size(), " bytes; the limit is ",
                     kMaxSourceBytes));
  }
  return Lexer(source).Run();
}

}  // namespace rnode::rholang
