#include "common/Evidence.h"

namespace conform {

using nlohmann::json;

namespace {

std::string string_field(const json& evidence, EvidenceField field) {
  const auto it = evidence.find(name(field));
  return it != evidence.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Evidence Evidence::read(const json& evidence) {
  Evidence out;
  if (!evidence.is_object()) return out;
  out.message = string_field(evidence, EvidenceField::kMessage);
  out.exception_type = string_field(evidence, EvidenceField::kExceptionType);
  out.where = find_named(kWheres, string_field(evidence, EvidenceField::kWhere));
  out.stage = string_field(evidence, EvidenceField::kStage);
  out.failing_op = string_field(evidence, EvidenceField::kFailingOp);
  out.sample = string_field(evidence, EvidenceField::kSample);
  if (const auto it = evidence.find(name(EvidenceField::kErrors));
      it != evidence.end() && it->is_array()) {
    for (const json& e : *it)
      if (e.is_string()) out.errors.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace conform
