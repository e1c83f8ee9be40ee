// The binary operators' precedence table (rholang/frontend/internal/precedence.h).
#include "rholang/frontend/internal/precedence.h"

namespace rnode::rholang::internal {

using ast::BinaryOp;

bool BinaryLevel(Tok t, BinaryInfo* info) {
  switch (t) {
    case Tok::kBar:
      *info = {kLevelPar, BinaryOp::kOr};
      return true;
    case Tok::kOr:
      *info = {4, BinaryOp::kOr};
      return true;
    case Tok::kBarBar:
      *info = {4, BinaryOp::kShortOr};
      return true;
    case Tok::kAnd:
      *info = {5, BinaryOp::kAnd};
      return true;
    case Tok::kAmpAmp:
      *info = {5, BinaryOp::kShortAnd};
      return true;
    case Tok::kEqEq:
      *info = {6, BinaryOp::kEq};
      return true;
    case Tok::kNeq:
      *info = {6, BinaryOp::kNeq};
      return true;
    case Tok::kMatches:
      *info = {6, BinaryOp::kEq};
      return true;
    case Tok::kLt:
      *info = {7, BinaryOp::kLt};
      return true;
    case Tok::kLe:
      *info = {7, BinaryOp::kLte};
      return true;
    case Tok::kGt:
      *info = {7, BinaryOp::kGt};
      return true;
    case Tok::kGe:
      *info = {7, BinaryOp::kGte};
      return true;
    case Tok::kPlus:
      *info = {8, BinaryOp::kAdd};
      return true;
    case Tok::kMinus:
      *info = {8, BinaryOp::kSub};
      return true;
    case Tok::kPlusPlus:
      *info = {8, BinaryOp::kConcat};
      return true;
    case Tok::kMinusMinus:
      *info = {8, BinaryOp::kDiff};
      return true;
    case Tok::kStar:
      *info = {9, BinaryOp::kMul};
      return true;
    case Tok::kSlash:
      *info = {9, BinaryOp::kDiv};
      return true;
    case Tok::kPercent:
      *info = {9, BinaryOp::kMod};
      return true;
    case Tok::kPercentPercent:
      *info = {9, BinaryOp::kInterpolate};
      return true;
    case Tok::kDot:
      *info = {kLevelMethod, BinaryOp::kOr};
      return true;
    case Tok::kDisj:
      *info = {13, BinaryOp::kDisj};
      return true;
    case Tok::kConj:
      *info = {14, BinaryOp::kConj};
      return true;
    default:
      return false;
  }
}

}  // namespace rnode::rholang::internal
