#pragma once

// What the fuzz targets share: the parsers' contract, and a file to hand the file readers.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace conform::fuzz {

// Runs `parse` on untrusted input. Bad input must be refused with std::invalid_argument or
// std::runtime_error carrying a message (the CLI prints it and exits 2); any other exception
// (a json::type_error, std::out_of_range) escapes, and the fuzzer reports it as the bug it is.
template <typename Parse>
void refuses_cleanly(Parse&& parse) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).empty()) throw std::logic_error("refused without a message");
  } catch (const std::runtime_error& e) {
    if (std::string_view(e.what()).empty()) throw std::logic_error("refused without a message");
  }
}

// The input written to this process's scratch file (for readers that take a path), whose path
// it returns. The file is reused by every input of the run.
std::string as_file(const std::uint8_t* data, std::size_t size, const std::string& suffix);

}  // namespace conform::fuzz
