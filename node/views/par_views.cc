// Client rhoapi.Par values to and from the IR, and the RhoExpr JSON.
#include "node/views/par_views.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "node/views/internal/utf8.h"
#include "rholang/frontend/public_par.h"
#include "util/bytes.h"
#include "util/status_macros.h"

namespace rnode::node::views {
namespace {

namespace ir = rholang::ir;
using nlohmann::json;

// ---- rhoapi.Par -> IR ----

absl::Status NotAValue(std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("a name must be a closed value: ", std::string(what),
                   " are not supported"));
}

// One decoding, with its node budget. Recursion: Par -> Expr/Bundle -> Par,
// with `depth` counting Pars and checked before descending.
class ValueDecoder {
 public:
  absl::StatusOr<ir::ParPtr> DecodePar(const ::rhoapi::Par& p, uint32_t depth) {
    if (depth > kMaxValueParDepth) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "value nested deeper than ", kMaxValueParDepth, " levels"));
    }
    RETURN_IF_ERROR(CountNode());
    if (p.sends_size() > 0) return NotAValue("sends");
    if (p.receives_size() > 0) return NotAValue("receives");
    if (p.news_size() > 0) return NotAValue("'new' declarations");
    if (p.matches_size() > 0) return NotAValue("'match' processes");
    if (p.connectives_size() > 0) return NotAValue("pattern connectives");
    if (p.conditionals_size() > 0) return NotAValue("'if' processes");
    ir::ParBuilder builder;
    for (const ::rhoapi::Expr& e : p.exprs()) {
      ASSIGN_OR_RETURN(ir::ExprPtr expr, DecodeExpr(e, depth));
      builder.Add(std::move(expr));
    }
    for (const ::rhoapi::GUnforgeable& u : p.unforgeables()) {
      ASSIGN_OR_RETURN(ir::UnforgeablePtr unf, DecodeUnforgeable(u));
      builder.Add(std::move(unf));
    }
    for (const ::rhoapi::Bundle& b : p.bundles()) {
      RETURN_IF_ERROR(CountNode());
      ASSIGN_OR_RETURN(ir::ParPtr body, DecodePar(b.body(), depth + 1));
      builder.Add(
          ir::Bundle::Make(std::move(body), b.writeflag(), b.readflag()));
    }
    return builder.Build();
  }

 private:
  absl::Status CountNode() {
    if (++nodes_ > kMaxValueNodes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("value has more than ", kMaxValueNodes, " nodes"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<ir::ParPtr>> DecodeAll(
      const google::protobuf::RepeatedPtrField<::rhoapi::Par>& ps,
      uint32_t depth) {
    std::vector<ir::ParPtr> out;
    out.reserve(static_cast<size_t>(ps.size()));
    for (const ::rhoapi::Par& p : ps) {
      ASSIGN_OR_RETURN(ir::ParPtr par, DecodePar(p, depth + 1));
      out.push_back(std::move(par));
    }
    return out;
  }

  absl::StatusOr<ir::ExprPtr> DecodeExpr(const ::rhoapi::Expr& e,
                                         uint32_t depth) {
    RETURN_IF_ERROR(CountNode());
    using E = ::rhoapi::Expr;
    switch (e.expr_instance_case()) {
      case E::kGBool:
        return ir::Expr::Bool(e.g_bool());
      case E::kGInt:
        return ir::Expr::Int(e.g_int());
      case E::kGString:
        return ir::Expr::String(e.g_string());
      case E::kGUri:
        return ir::Expr::Uri(e.g_uri());
      case E::kGByteArray:
        return ir::Expr::ByteArray(AsBytes(e.g_byte_array()));
      case E::kEListBody: {
        if (e.e_list_body().has_remainder()) {
          return NotAValue("list remainders");
        }
        ASSIGN_OR_RETURN(auto ps, DecodeAll(e.e_list_body().ps(), depth));
        return ir::Expr::List(std::move(ps), std::nullopt);
      }
      case E::kETupleBody: {
        ASSIGN_OR_RETURN(auto ps, DecodeAll(e.e_tuple_body().ps(), depth));
        return ir::Expr::Tuple(std::move(ps));
      }
      case E::kESetBody: {
        if (e.e_set_body().has_remainder()) {
          return NotAValue("set remainders");
        }
        ASSIGN_OR_RETURN(auto ps, DecodeAll(e.e_set_body().ps(), depth));
        return ir::Expr::Set(std::move(ps), std::nullopt);
      }
      case E::kEMapBody: {
        if (e.e_map_body().has_remainder()) {
          return NotAValue("map remainders");
        }
        std::vector<std::pair<ir::ParPtr, ir::ParPtr>> kvs;
        kvs.reserve(static_cast<size_t>(e.e_map_body().kvs_size()));
        for (const ::rhoapi::KeyValuePair& kv : e.e_map_body().kvs()) {
          // An absent key or value is the empty Par: Nil.
          ASSIGN_OR_RETURN(ir::ParPtr key, DecodePar(kv.key(), depth + 1));
          ASSIGN_OR_RETURN(ir::ParPtr value, DecodePar(kv.value(), depth + 1));
          kvs.emplace_back(std::move(key), std::move(value));
        }
        return ir::Expr::Map(std::move(kvs), std::nullopt);
      }
      case E::kEVarBody:
        return NotAValue("variables");
      case E::kEMethodBody:
        return NotAValue("method calls");
      case E::kEMatchesBody:
        return NotAValue("'matches' expressions");
      case E::kENotBody:
      case E::kENegBody:
      case E::kEMultBody:
      case E::kEDivBody:
      case E::kEModBody:
      case E::kEPlusBody:
      case E::kEMinusBody:
      case E::kELtBody:
      case E::kELteBody:
      case E::kEGtBody:
      case E::kEGteBody:
      case E::kEEqBody:
      case E::kENeqBody:
      case E::kEAndBody:
      case E::kEOrBody:
      case E::kEPercentPercentBody:
      case E::kEPlusPlusBody:
      case E::kEMinusMinusBody:
      case E::kEShortAndBody:
      case E::kEShortOrBody:
        return NotAValue("operators");
      case E::kEPathmapBody:
      case E::kEZipperBody:
        return NotAValue("path maps");
      case E::kGDouble:
        return NotAValue("floating-point numbers");
      case E::kGBigInt:
        return NotAValue("big integers");
      case E::kGBigRat:
        return NotAValue("big rationals");
      case E::kGFixedPoint:
        return NotAValue("fixed-point numbers");
      case E::EXPR_INSTANCE_NOT_SET:
        break;
    }
    return absl::InvalidArgumentError("an Expr holds no value");
  }

  absl::StatusOr<ir::UnforgeablePtr> DecodeUnforgeable(
      const ::rhoapi::GUnforgeable& u) {
    RETURN_IF_ERROR(CountNode());
    using U = ::rhoapi::GUnforgeable;
    switch (u.unf_instance_case()) {
      case U::kGPrivateBody:
        return ir::Unforgeable::Make(ir::UnforgeableKind::kPrivate,
                                     AsBytes(u.g_private_body().id()));
      case U::kGDeployIdBody:
        return ir::Unforgeable::Make(ir::UnforgeableKind::kDeployId,
                                     AsBytes(u.g_deploy_id_body().sig()));
      case U::kGDeployerIdBody:
        return ir::Unforgeable::Make(
            ir::UnforgeableKind::kDeployerId,
            AsBytes(u.g_deployer_id_body().publickey()));
      case U::kGSysAuthTokenBody:
        return ir::Unforgeable::Make(ir::UnforgeableKind::kSysAuthToken, {});
      case U::UNF_INSTANCE_NOT_SET:
        break;
    }
    return absl::InvalidArgumentError("an unforgeable name holds no value");
  }

  uint64_t nodes_ = 0;
};

// ---- IR -> RhoExpr JSON ----

json Tagged(std::string_view tag, json body) {
  json out = json::object();
  out[std::string(tag)] = std::move(body);
  return out;
}

json Unknown(std::string_view type_name) {
  return Tagged("ExprUnknown", {{"type_name", type_name}});
}

std::optional<json> ParJson(const ir::Par& par);

// The RhoExpr of an operand, Nil shown as ExprUnknown "Nil".
json OperandJson(const ir::ParPtr& p) {
  std::optional<json> out = ParJson(*p);
  return out ? *std::move(out) : Unknown("Nil");
}

// The RhoExprs of `ps`, Nil elements left out.
json ElementsJson(const std::vector<ir::ParPtr>& ps) {
  json out = json::array();
  for (const ir::ParPtr& p : ps) {
    std::optional<json> e = ParJson(*p);
    if (e) out.push_back(*std::move(e));
  }
  return out;
}

// The text an ExprMap uses for a key (Rust `extract_key_from_expr`).
std::string KeyText(const json& expr) {
  const json::const_iterator entry = expr.cbegin();
  const std::string& tag = entry.key();
  const json& body = entry.value();
  if (tag == "ExprString" || tag == "ExprUri" || tag == "ExprBytes") {
    return body["data"].get<std::string>();
  }
  if (tag == "ExprInt" || tag == "ExprBool") return body["data"].dump();
  if (tag == "ExprUnforg") {
    const json& unforg = body["data"];
    if (unforg.is_string()) return "SysAuthToken";
    return unforg.begin()->at("data").get<std::string>();
  }
  return expr.dump();
}

json UnforgeableJson(const ir::Unforgeable& u) {
  std::string_view tag;
  switch (u.kind) {
    case ir::UnforgeableKind::kPrivate:
      tag = "UnforgPrivate";
      break;
    case ir::UnforgeableKind::kDeployId:
      tag = "UnforgDeploy";
      break;
    case ir::UnforgeableKind::kDeployerId:
      tag = "UnforgDeployer";
      break;
    case ir::UnforgeableKind::kSysAuthToken:
      return Tagged("ExprUnforg", {{"data", "UnforgSysAuthToken"}});
  }
  return Tagged("ExprUnforg",
                {{"data", Tagged(tag, {{"data", HexEncode(u.id)}})}});
}

json BinaryJson(std::string_view tag, const ir::Expr& e) {
  return Tagged(tag, {{"left", OperandJson(e.operands[0])},
                      {"right", OperandJson(e.operands[1])}});
}

json ExprJson(const ir::Expr& e) {
  switch (e.kind) {
    case ir::ExprKind::kBool:
      return Tagged("ExprBool", {{"data", e.bool_value}});
    case ir::ExprKind::kInt:
      return Tagged("ExprInt", {{"data", e.int_value}});
    case ir::ExprKind::kString:
      return Tagged("ExprString", {{"data", internal::Utf8Sanitized(e.text)}});
    case ir::ExprKind::kUri:
      return Tagged("ExprUri", {{"data", internal::Utf8Sanitized(e.text)}});
    case ir::ExprKind::kByteArray:
      return Tagged("ExprBytes", {{"data", HexEncode(AsBytes(e.text))}});
    case ir::ExprKind::kVar: {
      const int64_t index = e.var.kind == ir::VarKind::kWildcard
                                ? -1
                                : static_cast<int64_t>(e.var.index);
      return Tagged("ExprVar", {{"index", index}});
    }
    case ir::ExprKind::kNot:
      return Tagged("ExprNot", {{"data", OperandJson(e.operands[0])}});
    case ir::ExprKind::kNeg:
      return Tagged("ExprNeg", {{"data", OperandJson(e.operands[0])}});
    case ir::ExprKind::kMul:
      return BinaryJson("ExprMult", e);
    case ir::ExprKind::kDiv:
      return BinaryJson("ExprDiv", e);
    case ir::ExprKind::kMod:
      return BinaryJson("ExprMod", e);
    case ir::ExprKind::kAdd:
      return BinaryJson("ExprPlus", e);
    case ir::ExprKind::kSub:
      return BinaryJson("ExprMinus", e);
    case ir::ExprKind::kLt:
      return BinaryJson("ExprLt", e);
    case ir::ExprKind::kLte:
      return BinaryJson("ExprLte", e);
    case ir::ExprKind::kGt:
      return BinaryJson("ExprGt", e);
    case ir::ExprKind::kGte:
      return BinaryJson("ExprGte", e);
    case ir::ExprKind::kEq:
      return BinaryJson("ExprEq", e);
    case ir::ExprKind::kNeq:
      return BinaryJson("ExprNeq", e);
    case ir::ExprKind::kAnd:
      return BinaryJson("ExprAnd", e);
    case ir::ExprKind::kOr:
      return BinaryJson("ExprOr", e);
    case ir::ExprKind::kShortAnd:
      return BinaryJson("ExprShortAnd", e);
    case ir::ExprKind::kShortOr:
      return BinaryJson("ExprShortOr", e);
    case ir::ExprKind::kMatches:
      return Tagged("ExprMatches", {{"target", OperandJson(e.operands[0])},
                                    {"pattern", OperandJson(e.operands[1])}});
    case ir::ExprKind::kPercentPercent:
      return BinaryJson("ExprInterpolate", e);
    case ir::ExprKind::kPlusPlus:
      return BinaryJson("ExprConcat", e);
    case ir::ExprKind::kMinusMinus:
      return BinaryJson("ExprDiff", e);
    case ir::ExprKind::kList:
      return Tagged("ExprList", {{"data", ElementsJson(e.operands)}});
    case ir::ExprKind::kTuple:
      return Tagged("ExprTuple", {{"data", ElementsJson(e.operands)}});
    case ir::ExprKind::kSet:
      return Tagged("ExprSet", {{"data", ElementsJson(e.operands)}});
    case ir::ExprKind::kMap: {
      json data = json::object();
      for (size_t i = 0; i + 1 < e.operands.size(); i += 2) {
        std::optional<json> key = ParJson(*e.operands[i]);
        std::optional<json> value = ParJson(*e.operands[i + 1]);
        if (key && value) data[KeyText(*key)] = *std::move(value);
      }
      return Tagged("ExprMap", {{"data", std::move(data)}});
    }
    case ir::ExprKind::kMethod:
      return Tagged("ExprMethod", {{"target", OperandJson(e.target)},
                                   {"name", internal::Utf8Sanitized(e.text)},
                                   {"args", ElementsJson(e.operands)}});
  }
  return Unknown("Expr");  // Not reached: the switch covers every kind.
}

// nullopt for Nil.
std::optional<json> ParJson(const ir::Par& par) {
  std::vector<json> items;
  for (const ir::ExprPtr& e : par.exprs) items.push_back(ExprJson(*e));
  for (const ir::UnforgeablePtr& u : par.unforgeables) {
    items.push_back(UnforgeableJson(*u));
  }
  for (const ir::BundlePtr& b : par.bundles) {
    items.push_back(Tagged("ExprBundle", {{"data", OperandJson(b->body)},
                                          {"read", b->read_flag},
                                          {"write", b->write_flag}}));
  }
  if (items.size() == 1) return std::move(items[0]);
  if (items.empty()) {
    const bool process = !par.sends.empty() || !par.receives.empty() ||
                         !par.news.empty() || !par.matches.empty() ||
                         !par.connectives.empty() || !par.conditionals.empty();
    if (process) return Unknown("Process");
    return std::nullopt;
  }
  return Tagged("ExprPar", {{"data", json(std::move(items))}});
}

// ---- RhoUnforg JSON -> IR ----

constexpr char kNameShape[] =
    "a name is {\"UnforgPrivate\"|\"UnforgDeploy\"|\"UnforgDeployer\": "
    "{\"data\": hex}}";

// Longest part of a client's key echoed back in an error.
constexpr size_t kMaxEchoedKeyChars = 64;

}  // namespace

absl::StatusOr<ir::ParPtr> ParFromProto(const ::rhoapi::Par& par) {
  ValueDecoder decoder;
  return decoder.DecodePar(par, 1);
}

absl::StatusOr<::rhoapi::Par> ParToProto(const ir::Par& par) {
  ASSIGN_OR_RETURN(Bytes bytes, rholang::EncodePublicPar(par));
  google::protobuf::io::CodedInputStream stream(bytes.data(),
                                                static_cast<int>(bytes.size()));
  // Every IR level becomes at most two message levels (a map entry is an
  // EMap and a KeyValuePair under its Expr); the parser's default limit of
  // 100 would refuse terms the encoder accepts.
  stream.SetRecursionLimit(static_cast<int>(3 * rholang::kMaxIrDepth));
  ::rhoapi::Par out;
  if (!out.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    return absl::InternalError(
        "EncodePublicPar produced bytes that do not parse as a rhoapi.Par");
  }
  return out;
}

json RhoExprJson(const ir::Par& par) {
  if (par.height > rholang::kMaxIrDepth) return Unknown("TooDeep");
  if (par.size > kMaxRhoExprJsonSize) return Unknown("TooLarge");
  std::optional<json> out = ParJson(par);
  return out ? *std::move(out) : json(nullptr);
}

absl::StatusOr<ir::ParPtr> ParFromRhoUnforgJson(const json& name) {
  if (name.is_string() &&
      name.get_ref<const std::string&>() == "UnforgSysAuthToken") {
    return ir::ParBuilder()
        .Add(ir::Unforgeable::Make(ir::UnforgeableKind::kSysAuthToken, {}))
        .Build();
  }
  if (!name.is_object() || name.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(kNameShape, ", got ", name.type_name()));
  }
  // Not `*name.items().begin()`: that proxy is a temporary, and bindings
  // to it dangle.
  const json::const_iterator entry = name.cbegin();
  const std::string& tag = entry.key();
  const json& body = entry.value();
  ir::UnforgeableKind kind;
  if (tag == "UnforgPrivate") {
    kind = ir::UnforgeableKind::kPrivate;
  } else if (tag == "UnforgDeploy") {
    kind = ir::UnforgeableKind::kDeployId;
  } else if (tag == "UnforgDeployer") {
    kind = ir::UnforgeableKind::kDeployerId;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        kNameShape, ": unknown kind \"",
        absl::CHexEscape(tag.substr(0, kMaxEchoedKeyChars)), "\""));
  }
  if (!body.is_object() || !body.contains("data") ||
      !body["data"].is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(tag, " must be {\"data\": hex}"));
  }
  absl::StatusOr<Bytes> id =
      HexDecode(body["data"].get_ref<const std::string&>());
  if (!id.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(tag, ".data: ", id.status().message()));
  }
  return ir::ParBuilder().Add(ir::Unforgeable::Make(kind, *id)).Build();
}

}  // namespace rnode::node::views
