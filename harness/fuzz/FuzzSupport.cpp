#include "FuzzSupport.h"

#include <fmt/format.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace conform::fuzz {

std::string as_file(const std::uint8_t* data, std::size_t size, const std::string& suffix) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("neuron-conform-fuzz-{}", ::getpid()))
          .string() +
      suffix;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace conform::fuzz
