// Vectorised sliding windows over one NCHW plane, shared by the depthwise convolution and the
// max/average pools on targets with vector registers. A step computes a group of R output rows
// of a plane: along the row, column tiles of V lanes (a run-time loop over the interior tiles,
// whose taps all lie inside the image, and unrolled edge tiles whose loads use constant lane
// masks); in a tile, each input row of the group's window is loaded once per kernel column and
// feeds every output row of the group that uses it (R accumulators in registers). Input rows
// above or below the image are read from a stack row filled with the padding value, so no tap
// tests bounds. A last tile that would run past the row's end is shifted left to end on it
// (recomputing a few columns) so stores stay unmasked; only rows narrower than a vector (one
// tile, wider than half a vector or narrower than 4 lanes) keep their inside lanes, stored in
// pieces (one masked store on AVX-512). Stride 2 loads 2V consecutive inputs and splits them
// into even and odd lanes (two kernel columns per load pair). Dilation 1 only.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "fused_epilogue.h"
#include "kernel_builder.h"

namespace kiln::codegen::detail {

struct WindowGeometry {
  int64_t H = 1, W = 1, OH = 1, OW = 1;  // input and output plane
  int64_t KH = 1, KW = 1;                // window
  int64_t sh = 1, sw = 1;                // strides (sw 1 or 2)
  int64_t padTop = 0, padLeft = 0;
};

// The geometry of an NCHW window kernel (depthwise conv, 2-D pool) with a KH x KW window:
// planes from the input and output shapes, strides and begin pads from the descriptor.
WindowGeometry windowGeometry(const KernelDesc& d, int64_t KH, int64_t KW);

// True if the row engine can run the descriptor's window on vectors of `lanes`: 4 lanes or
// more, a 2-D (NCHW) input, dilation 1 and width stride 1 or 2.
bool windowRowsApply(const KernelDesc& d, unsigned lanes);

// One column tile shape of a row: `repeats` tiles of `lanes` columns from `start` on, side by
// side. A looped tile (repeats counted at run time) is interior: no tap meets padding.
struct ColumnTile {
  int64_t start = 0;
  int64_t repeats = 1;
  unsigned lanes = 8;
  bool loop = false;
};

// The tiles covering [0, OW) for vectors of `lanes` f32 (stores may overlap, never pass OW
// unless OW is less than a vector, where the only tile stores its first OW lanes).
std::vector<ColumnTile> planColumnTiles(const WindowGeometry& g, unsigned lanes);

// What a window computes. `init` is an output vector's value before any tap, `combine` folds
// the input vector `x` of tap (kh, kw) into it, `finish` receives the final value of output row
// r of the group at columns [column, column + lanes) (storeMask: lanes inside the row, or
// nullptr if all are) and stores it.
struct WindowOps {
  float padValue = 0.0f;  // value of inputs in the padding
  std::function<llvm::Value*(unsigned lanes)> init;
  std::function<llvm::Value*(llvm::Value* acc, llvm::Value* x, int64_t kh, int64_t kw)> combine;
  std::function<void(int64_t r, const ColumnTile& tile, llvm::Value* column, llvm::Value* acc,
                     llvm::Constant* storeMask)>
      finish;
};

// True if the row engine should take this window: at most 16 x 16 taps and a bounded number
// of unrolled tiles (code size; wider windows keep the plain kernels' run-time loops).
bool windowTilesFit(const WindowGeometry& g, const std::vector<ColumnTile>& tiles);

// True if some output row's window reaches above or below the image (a pad row is needed).
bool windowNeedsPadRow(const WindowGeometry& g);

// A stack row of W elements filled with `value` (call once, before the workgroup loop).
llvm::Value* makePadRow(KernelBuilder& kb, const WindowGeometry& g, float value);

// Emits output rows [oh0, oh0 + rows) of the plane that starts at element `inPlane` of
// binding 0. `padRow` is makePadRow's row, or nullptr if !windowNeedsPadRow(g).
void emitWindowRows(KernelBuilder& kb, const WindowGeometry& g,
                    const std::vector<ColumnTile>& tiles, llvm::Value* inPlane, llvm::Value* oh0,
                    int64_t rows, llvm::Value* padRow, const WindowOps& ops);

// Rows per group: the output rows a step computes together (more on targets with 32 vector
// registers).
int64_t windowGroupRows(const WindowGeometry& g, unsigned vectorRegisters);

// Calls rowsBody(plane, oh0, rows) for this workgroup's share of the (plane, row group) items
// of `planes` planes: full groups of windowGroupRows(g) rows, and the last group of a plane
// with the remaining rows (a separate copy of the code, rows being a compile-time count).
void forEachWindowGroup(
    KernelBuilder& kb, const WindowGeometry& g, int64_t planes,
    const std::function<void(llvm::Value* plane, llvm::Value* oh0, int64_t rows)>& rowsBody);

// Work items forEachWindowGroup splits over workgroups.
int64_t windowGroupCount(const WindowGeometry& g, int64_t planes, unsigned vectorRegisters);

// The output side of a window kernel over NCHW output planes of OH x OW: the output rows of a
// group and the store of their finished vectors, the fused epilogue applied before that only
// store if it evaluates on vectors, else over each finished row.
class WindowOutput {
 public:
  explicit WindowOutput(KernelBuilder& kb) : kb_(kb), epilogue_(kb) {}

  // Starts the group of output rows [oh0, oh0 + rows) of `plane`; perRow(r, oh), if given,
  // runs after the set-up of row r (the caller's own per-row values).
  void startGroup(const WindowGeometry& g, llvm::Value* plane, llvm::Value* oh0, int64_t rows,
                  const std::function<void(int64_t r, llvm::Value* oh)>& perRow = nullptr);
  // Stores row r's finished vector `acc` at columns [column, column + lanes); storeMask: the
  // lanes inside the row, or nullptr if all are (WindowOps::finish's arguments).
  void store(int64_t r, llvm::Value* column, llvm::Value* acc, llvm::Constant* storeMask);
  // After emitWindowRows: an epilogue that does not evaluate on vectors, over each finished
  // row of the group (still in L1).
  void finishGroup(const WindowGeometry& g, int64_t rows);

 private:
  KernelBuilder& kb_;
  FusedEpilogue epilogue_;
  std::vector<llvm::Value*> rowStart_;  // per output row of the group: its first element
  int64_t aheadElements_ = 0;           // prefetch for writing this far past each store (0: none)
  std::vector<FusedEpilogue::Row> epilogueRows_;
};

}  // namespace kiln::codegen::detail
