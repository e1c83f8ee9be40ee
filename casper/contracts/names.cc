#include "casper/contracts/names.h"

#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/system_processes.h"
#include "rholang/interpreter/term_codec.h"
#include "util/status_macros.h"

namespace rnode::casper::contracts {
namespace {

namespace ir = rholang::ir;
namespace interp = rholang::interp;

}  // namespace

ir::ParPtr EitherPar(bool ok, ir::ParPtr value) {
  return ir::ParOf(ir::Expr::Tuple({interp::BoolPar(ok), std::move(value)}));
}

absl::StatusOr<std::vector<ir::ParPtr>> OnlyDatum(
    const rspace::ChannelState& state) {
  if (state.data.size() != 1 || state.data[0].persist ||
      !state.continuations.empty()) {
    return absl::FailedPreconditionError(
        "the channel does not hold exactly one datum");
  }
  std::shared_ptr<const interp::StoredValue> holder;
  ASSIGN_OR_RETURN(const interp::DataValue* d,
                   interp::DataOf(*state.data[0].value, holder));
  return d->pars;
}

ir::ParPtr WriteOnlyObject(ObjectKind kind, std::string_view key) {
  return ir::ParBuilder()
      .Add(ir::Bundle::Make(interp::ObjectName(kind, AsBytes(key)),
                            /*write_flag=*/true, /*read_flag=*/false))
      .Build();
}

ir::ParPtr AuthKeyOf(std::string_view address) {
  return ir::ParBuilder()
      .Add(
          ir::Bundle::Make(interp::ObjectName(kAuthKeyObject, AsBytes(address)),
                           /*write_flag=*/false, /*read_flag=*/false))
      .Build();
}

const std::string& PosVaultAddress() {
  static const std::string* const a =
      new std::string(interp::AddressOfPrivateName(AsBytes("rnode/pos-vault")));
  return *a;
}

const std::string& CoopVaultAddress() {
  static const std::string* const a = new std::string(
      interp::AddressOfPrivateName(AsBytes("rnode/coop-vault")));
  return *a;
}

}  // namespace rnode::casper::contracts
