#include "casper/contracts/names.h"

#include "rholang/interpreter/process_util.h"
#include "rholang/interpreter/system_processes.h"

namespace rnode::casper::contracts {
namespace {

namespace ir = rholang::ir;
namespace interp = rholang::interp;

}  // namespace

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
