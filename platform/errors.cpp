#include "platform/errors.h"

namespace fencecheck {

InputError::InputError(const std::string& file, std::size_t line, const std::string& field,
                       const std::string& what)
    : std::runtime_error(file + ":" + std::to_string(line) + ": " +
                         (field.empty() ? "" : "field '" + field + "': ") + what),
      file_(file),
      line_(line),
      field_(field) {}

}  // namespace fencecheck
