// The `--group-by-arg` naming rule (see group_by_arg.h).
#include "model/group_by_arg.h"

#include <string>
#include <string_view>

namespace spanprof::analysis::internal {

std::string GroupedSiteName(std::string_view name, std::string_view arg,
                            std::string_view value, bool truncated) {
  std::string grouped;
  grouped.reserve(name.size() + arg.size() + value.size() + 8);
  grouped.append(name).append(" [").append(arg).append("=").append(value);
  grouped.append(truncated ? "...]" : "]");
  return grouped;
}

}  // namespace spanprof::analysis::internal
