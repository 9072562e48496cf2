// Reading and verifying a .tflite flatbuffer (see tflite_model_reader.h).
#include "tflite_model_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "kiln/support/diagnostics.h"

namespace kiln::import::tflite {

ModelFile::ModelFile(std::string_view bytes, std::string displayName)
    : displayName_(std::move(displayName)) {
  auto fail = [&](const std::string& message) {
    throw CompileError(displayName_ + ": " + message);
  };
  if (bytes.size() < 8)
    fail("not a TFLite model: the file is " + std::to_string(bytes.size()) +
         " bytes long, too short for a flatbuffer");
  if (bytes.size() >= (uint64_t(1) << 31))
    fail("TFLite models over 2 GB (buffers outside the flatbuffer) are not supported");
  storage_.resize((bytes.size() + 7) / 8);
  std::memcpy(storage_.data(), bytes.data(), bytes.size());
  const auto* data = reinterpret_cast<const uint8_t*>(storage_.data());
  if (!flatbuffers::BufferHasIdentifier(data, fb::ModelIdentifier())) {
    std::string id(bytes.substr(4, 4));
    for (char& c : id)
      if (c < 32 || c > 126) c = '?';
    fail("not a TFLite model: file identifier '" + id + "', expected 'TFL3'");
  }
  // Depth and table limits well above any real model; the verifier also bounds every
  // offset, vector and string by the buffer size.
  flatbuffers::Verifier verifier(data, bytes.size(), /*max_depth=*/64,
                                 /*max_tables=*/10'000'000);
  if (!fb::VerifyModelBuffer(verifier))
    fail("corrupt or truncated TFLite model: the flatbuffer failed verification");
  model_ = fb::GetModel(data);
  if (model_->version() != 3)
    fail("TFLite schema version " + std::to_string(model_->version()) + "; kiln reads version 3");
  if (!model_->subgraphs() || model_->subgraphs()->size() == 0)
    fail("the TFLite model has no subgraph");
  if (!model_->buffers()) fail("the TFLite model has no buffer table");
}

ModelFile ModelFile::read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw CompileError(path.string() + ": cannot open TFLite model: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw CompileError(path.string() + ": cannot read TFLite model");
  return ModelFile(bytes, path.string());
}

int32_t builtinCode(const fb::OperatorCode& code) {
  return std::max<int32_t>(code.deprecated_builtin_code(), code.builtin_code());
}

}  // namespace kiln::import::tflite
