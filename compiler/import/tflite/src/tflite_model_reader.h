// The .tflite file in memory: read, identifier checked and verified by flatbuffers::Verifier
// before any field is read, so a corrupt or truncated file is one clear CompileError and
// never a crash. Internal to kiln_import_tflite (it exposes the generated flatbuffers API).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tflite_subset_generated.h"

namespace kiln::import::tflite {

namespace fb = ::kiln::tflite_fb;

class ModelFile {
 public:
  // Copies `bytes` (flatbuffers wants an aligned buffer) and verifies them.
  ModelFile(std::string_view bytes, std::string displayName);
  // Reads and verifies the file at `path`.
  static ModelFile read(const std::filesystem::path& path);
  ModelFile(ModelFile&&) = default;  // the storage moves with its heap block: model_ stays valid
  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;

  const fb::Model& model() const { return *model_; }
  const fb::SubGraph& mainGraph() const { return *model_->subgraphs()->Get(0); }
  const std::string& displayName() const { return displayName_; }

 private:
  std::vector<uint64_t> storage_;  // 8-byte aligned copy of the file
  std::string displayName_;
  const fb::Model* model_ = nullptr;
};

// The operator code's builtin operator: the larger of the two code fields (TFLite keeps the
// old byte field for codes below 127).
int32_t builtinCode(const fb::OperatorCode& code);

}  // namespace kiln::import::tflite
