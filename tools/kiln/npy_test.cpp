// Tests for .npy reading and writing: files written by numpy itself (the shared TFLite
// reference data) read back with the values numpy reports, round trips, and the errors.
#include "npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "cli_error.h"
#include "half.h"

namespace kiln::cli {
namespace {

std::string refs() { return std::string(KILN_TESTDATA_DIR) + "/tflite/refs"; }

std::vector<uint8_t> npyWithHeader(const std::string& dict, size_t dataBytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                static_cast<uint8_t>(header.size()), 0};
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.resize(bytes.size() + dataBytes, 0);
  return bytes;
}

std::string errorOf(const std::vector<uint8_t>& bytes) {
  try {
    decodeNpy(bytes, "x.npy");
  } catch (const CliError& e) {
    return e.what();
  }
  return "";
}

TEST(Npy, ReadsInt16WrittenByNumpy) {
  // numpy: dtype int16, shape (1, 1, 20, 32), first values -3035 -32533 12172, last -27388.
  HostTensor t = readNpyFile(refs() + "/pad7/seed1/input_0.npy");
  EXPECT_EQ(t.type, ElementType::I16);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 1, 20, 32}));
  EXPECT_EQ(t.elementAsDouble(0), -3035);
  EXPECT_EQ(t.elementAsDouble(1), -32533);
  EXPECT_EQ(t.elementAsDouble(2), 12172);
  EXPECT_EQ(t.elementAsDouble(639), -27388);
}

TEST(Npy, ReadsInt32AndFloat32WrittenByNumpy) {
  HostTensor i = readNpyFile(refs() + "/transpose_conv0/seed1/input_0.npy");
  EXPECT_EQ(i.type, ElementType::I32);
  EXPECT_EQ(i.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(i.elementAsDouble(0), 1791095845);
  EXPECT_EQ(i.elementAsDouble(1), -12091157);
  HostTensor f = readNpyFile(
      refs() + "/anomaly_detection__ToyCar__baseline_tf23__model__model_ToyCar_quant_fullint_micro/"
               "seed1/output_0.npy");
  EXPECT_EQ(f.type, ElementType::F32);
  EXPECT_EQ(f.shape, (std::vector<int64_t>{1, 640}));
  EXPECT_NEAR(f.elementAsDouble(0), -36.474213, 1e-5);
  EXPECT_NEAR(f.elementAsDouble(2), -10.528639, 1e-5);
}

TEST(Npy, EncodesLikeNumpy) {
  // np.save of np.array([[1, 2], [3, 4]], dtype=np.float32) is 144 bytes: a 118-byte header.
  HostTensor t{ElementType::F32, {2, 2}, {}};
  float values[] = {1, 2, 3, 4};
  t.data.assign(reinterpret_cast<uint8_t*>(values), reinterpret_cast<uint8_t*>(values) + 16);
  std::vector<uint8_t> bytes = encodeNpy(t);
  ASSERT_EQ(bytes.size(), 144u);
  EXPECT_EQ(bytes[8], 118);
  std::string header(bytes.begin() + 10, bytes.begin() + 128);
  EXPECT_TRUE(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"));
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(std::memcmp(bytes.data() + 128, values, 16), 0);
}

TEST(Npy, OneDimensionalAndScalarShapes) {
  HostTensor one{ElementType::I8, {1}, {7}};
  std::vector<uint8_t> bytes = encodeNpy(one);
  EXPECT_EQ(bytes.size(), 129u);  // numpy: np.array([7], np.int8)
  EXPECT_NE(std::string(bytes.begin(), bytes.end()).find("'shape': (1,), }"), std::string::npos);
  HostTensor scalar{ElementType::F16, {}, {0, 0}};
  uint16_t h = floatToHalf(2.5f);
  std::memcpy(scalar.data.data(), &h, 2);
  HostTensor back = decodeNpy(encodeNpy(scalar), "s.npy");
  EXPECT_TRUE(back.shape.empty());
  EXPECT_EQ(back.elementAsDouble(0), 2.5);
}

TEST(Npy, RoundTripsEveryType) {
  for (ElementType type : {ElementType::F32, ElementType::F16, ElementType::I8, ElementType::U8,
                           ElementType::I16, ElementType::I32, ElementType::I64,
                           ElementType::Bool, ElementType::F64}) {
    HostTensor t{type, {2, 3}, {}};
    t.data.resize(6 * elementSize(type));
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<uint8_t>(i % 2);
    std::string path = testing::TempDir() + "/roundtrip.npy";
    writeNpyFile(path, t);
    HostTensor back = readNpyFile(path);
    EXPECT_EQ(back.type, type);
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.data, t.data);
  }
}

TEST(Npy, ReadsVersion2Header) {
  std::vector<uint8_t> v1 = npyWithHeader(
      "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 12);
  std::vector<uint8_t> v2(v1.begin(), v1.begin() + 8);
  v2[6] = 2;
  uint32_t length = v1[8];
  for (int i = 0; i < 4; ++i) v2.push_back(static_cast<uint8_t>(length >> (8 * i)));
  v2.insert(v2.end(), v1.begin() + 10, v1.end());
  v2[v2.size() - 12] = 5;
  HostTensor t = decodeNpy(v2, "v2.npy");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(t.elementAsDouble(0), 5);
}

TEST(Npy, RejectsFortranOrder) {
  EXPECT_EQ(errorOf(npyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16)),
            "'x.npy': Fortran-order arrays are not supported; save np.ascontiguousarray(arr)");
}

TEST(Npy, RejectsBigEndian) {
  EXPECT_EQ(errorOf(npyWithHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8)),
            "'x.npy': big-endian dtype '>f4' is not supported; convert it with "
            "arr.astype(arr.dtype.newbyteorder('<'))");
}

TEST(Npy, RejectsUnsupportedDtype) {
  EXPECT_EQ(errorOf(npyWithHeader("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16)),
            "'x.npy': unsupported dtype '<c8'; supported: float32, float16, float64, int8, uint8, "
            "int16, int32, int64, bool");
}

// numpy's float64 ('<f8'): read exactly, written back with the same header.
TEST(Npy, Float64) {
  std::vector<uint8_t> bytes =
      npyWithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16);
  double values[] = {0.1, -1e300};
  std::memcpy(bytes.data() + bytes.size() - 16, values, 16);
  HostTensor t = decodeNpy(bytes, "d.npy");
  EXPECT_EQ(t.type, ElementType::F64);
  EXPECT_EQ(elementTypeName(t.type), "f64");
  EXPECT_EQ(t.elementAsDouble(0), 0.1);
  EXPECT_EQ(t.elementAsDouble(1), -1e300);
  EXPECT_EQ(encodeNpy(t), bytes);
}

TEST(Npy, RejectsTruncatedDataAndBadMagic) {
  EXPECT_EQ(errorOf(npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 8)),
            "'x.npy': truncated .npy data: the header says 16 bytes, the file holds 8");
  EXPECT_EQ(errorOf({'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}),
            "'x.npy': not a .npy file (no \\x93NUMPY magic)");
}

TEST(Npy, MissingFileNamesIt) {
  try {
    readNpyFile("/nonexistent/in.npy");
    FAIL();
  } catch (const CliError& e) {
    EXPECT_STREQ(e.what(), "cannot open '/nonexistent/in.npy': No such file or directory");
  }
}

TEST(Half, ConvertsExactly) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), 5.9604644775390625e-8f);  // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(floatToHalf(5.9604644775390625e-8f), 0x0001);
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);  // halfway: rounds to even
  for (uint32_t h = 0; h < 0x7c00; ++h) EXPECT_EQ(floatToHalf(halfToFloat(h)), h);
}

}  // namespace
}  // namespace kiln::cli
