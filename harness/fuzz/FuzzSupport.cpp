#include "FuzzSupport.h"

#include <fmt/format.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace conform::fuzz {

namespace {

// This process's scratch file, removed when the process ends.
struct ScratchFile {
  std::string path;
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

}  // namespace

std::string as_file(const std::uint8_t* data, std::size_t size, const std::string& suffix) {
  static const ScratchFile file{
      (std::filesystem::temp_directory_path() / fmt::format("neuron-conform-fuzz-{}", ::getpid()))
          .string() +
      suffix};
  std::ofstream out(file.path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file.path;
}

}  // namespace conform::fuzz
