// Tests for weights kept quantized (ops/quantized_weights) and their products
// (ops/quantized_linear): every format's blocks stored and given back byte for byte, dequantized as
// ops/dequantize does, and multiplied — one row and several, odd shapes, one and two threads —
// bit for bit as the float product over the dequantized weights, and within float32's summation
// bound of a float64 product.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention/error.hpp"
#include "attention/ops/dequantize.hpp"
#include "attention/ops/linear.hpp"
#include "attention/ops/matmul.hpp"
#include "attention/ops/quantized_linear.hpp"
#include "attention/ops/quantized_weights.hpp"
#include "attention/parallel.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

const attn::GgmlType kTypes[] = {attn::GgmlType::Q8_0, attn::GgmlType::Q4_0, attn::GgmlType::Q4_1,
                                 attn::GgmlType::Q5_0, attn::GgmlType::Q5_1, attn::GgmlType::Q4_K,
                                 attn::GgmlType::Q5_K, attn::GgmlType::Q6_K, attn::GgmlType::F32,
                                 attn::GgmlType::F16,  attn::GgmlType::BF16};

struct Threads {
  explicit Threads(std::size_t count) { attn::set_thread_count(count); }
  ~Threads() { attn::set_thread_count(1); }
};

// A random finite half: sign, an exponent 0 (a subnormal) … 14 (|x| < 2) and any mantissa, so the
// scales cover subnormals and zero too.
std::uint16_t random_half(std::mt19937& rng, int max_exponent = 14) {
  std::uniform_int_distribution<int> exponent(0, max_exponent), mantissa(0, 1023), sign(0, 1);
  int e = exponent(rng);
  if (e > 2) e = std::max(e, max_exponent - 6);  // mostly normal scales near the top, some tiny
  return std::uint16_t((sign(rng) << 15) | (e << 10) | mantissa(rng));
}

void put_half(std::uint8_t* at, std::uint16_t half) {
  at[0] = std::uint8_t(half & 0xFF);
  at[1] = std::uint8_t(half >> 8);
}

// `rows` rows of `cols` values of `type` as a GGUF file stores them: random bytes with finite
// halves where the format has its scales (d; m or dmin), so every quant and sub-scale bit varies.
std::vector<std::uint8_t> random_rows(attn::GgmlType type, std::size_t rows, std::size_t cols,
                                      std::mt19937& rng, int max_exponent = 14) {
  const attn::GgmlTypeInfo& info = attn::ggml_type_info(type);
  const std::size_t blocks = rows * cols / info.block_values;
  std::vector<std::uint8_t> bytes(blocks * info.block_bytes);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : bytes) b = std::uint8_t(byte(rng));
  for (std::size_t i = 0; i < blocks; ++i) {
    std::uint8_t* block = bytes.data() + i * info.block_bytes;
    switch (type) {
      case attn::GgmlType::Q6_K:  // d last
        put_half(block + 208, random_half(rng, max_exponent));
        break;
      case attn::GgmlType::Q4_1:
      case attn::GgmlType::Q5_1:
      case attn::GgmlType::Q4_K:
      case attn::GgmlType::Q5_K:  // d, then m or dmin
        put_half(block, random_half(rng, max_exponent));
        put_half(block + 2, random_half(rng, max_exponent));
        break;
      case attn::GgmlType::F32: {  // a finite value: normal, with a subnormal now and then
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const float v = byte(rng) < 8 ? 1e-40f : normal(rng);
        std::memcpy(block, &v, sizeof v);
        break;
      }
      case attn::GgmlType::BF16: {  // a finite value: sign, exponent 0 (subnormal) or near 2⁰
        std::uniform_int_distribution<int> exponent(107, 130), mantissa(0, 127), sign(0, 1);
        const int e = mantissa(rng) < 8 ? 0 : exponent(rng);
        put_half(block, std::uint16_t((sign(rng) << 15) | (e << 7) | mantissa(rng)));
        break;
      }
      default:  // d first (F16: the value)
        put_half(block, random_half(rng, max_exponent));
    }
  }
  return bytes;
}

attn::QuantizedMatrix matrix_of(attn::GgmlType type, std::size_t rows, std::size_t cols,
                                const std::vector<std::uint8_t>& bytes) {
  attn::QuantizedMatrix w(type, rows, cols);
  const attn::GgmlTypeInfo& info = attn::ggml_type_info(type);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t b = 0; b < w.blocks_per_row(); ++b) {
      w.set_block(r, b, bytes.data() + (r * w.blocks_per_row() + b) * info.block_bytes);
    }
  }
  return w;
}

std::vector<float> dequantized(attn::GgmlType type, const std::vector<std::uint8_t>& bytes,
                               std::size_t values) {
  std::vector<float> out(values);
  attn::dequantize(type, bytes, out);
  return out;
}

std::vector<float> random_floats(std::size_t count, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> out(count);
  for (auto& v : out) v = normal(rng);
  return out;
}

std::uint32_t bits_of(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

std::size_t bit_mismatches(const std::vector<float>& got, const std::vector<float>& want) {
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < got.size(); ++i) mismatches += bits_of(got[i]) != bits_of(want[i]);
  return mismatches;
}

// A row width of whole blocks that is not a multiple of 256 for the 32-value formats.
std::size_t odd_cols(attn::GgmlType type) {
  const std::size_t values = attn::ggml_type_info(type).block_values;
  return values == 256 ? 256 * 3 : 32 * 11;  // the float types (blocks of 1) as the 32-value ones
}

}  // namespace

TEST_CASE("a quantized matrix gives back each block byte for byte, whatever row it is in",
          "[quantized]") {
  std::mt19937 rng(34);
  for (const attn::GgmlType type : kTypes) {
    INFO(attn::ggml_type_name(type));
    const std::size_t rows = 2 * attn::kPanelWidth + 3, cols = odd_cols(type);
    const auto bytes = random_rows(type, rows, cols, rng);
    const attn::QuantizedMatrix w = matrix_of(type, rows, cols, bytes);
    const attn::GgmlTypeInfo& info = attn::ggml_type_info(type);
    CHECK(w.bytes() == attn::QuantizedMatrix::bytes_for(type, rows, cols));
    // each panel takes its file's bytes (+ Q4_K/Q5_K's 4 bytes a block for their unpacked scales)
    const std::size_t padded = (rows + attn::kPanelWidth - 1) / attn::kPanelWidth *
                               attn::kPanelWidth * (cols / info.block_values);
    const std::size_t extra =
        type == attn::GgmlType::Q4_K || type == attn::GgmlType::Q5_K ? 4 * padded : 0;
    CHECK(w.bytes() == padded * info.block_bytes + extra);
    std::vector<std::uint8_t> block(info.block_bytes);
    std::size_t differing = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t b = 0; b < w.blocks_per_row(); ++b) {
        w.get_block(r, b, block.data());
        const std::uint8_t* want = bytes.data() + (r * w.blocks_per_row() + b) * info.block_bytes;
        differing += std::memcmp(block.data(), want, info.block_bytes) != 0;
      }
    }
    CHECK(differing == 0);
    // and its rows dequantize as ops/dequantize reads the file's bytes, bit for bit
    std::vector<float> got(rows * cols);
    w.dequantize_rows(0, rows, got.data());
    CHECK(bit_mismatches(got, dequantized(type, bytes, rows * cols)) == 0);
  }
}

TEST_CASE("a quantized matrix refuses types it cannot keep and rows of partial blocks",
          "[quantized]") {
  CHECK_THROWS_WITH(attn::QuantizedMatrix(attn::GgmlType::Q2_K, 4, 256),
                    ContainsSubstring("a Q2_K matrix cannot be kept quantized") &&
                        ContainsSubstring("Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K"));
  CHECK_THROWS_WITH(attn::QuantizedMatrix(attn::GgmlType::Q4_K, 4, 288),
                    ContainsSubstring("rows of 288 values are not whole blocks of 256"));
}

TEST_CASE("the panels a prompt multiplies by are the dequantized values", "[quantized]") {
  std::mt19937 rng(35);
  for (const attn::GgmlType type : kTypes) {
    INFO(attn::ggml_type_name(type));
    const std::size_t rows = attn::kPanelWidth + 5, cols = odd_cols(type);
    const auto bytes = random_rows(type, rows, cols, rng);
    const attn::QuantizedMatrix w = matrix_of(type, rows, cols, bytes);
    const std::vector<float> want = dequantized(type, bytes, rows * cols);
    const std::size_t bv = attn::ggml_type_info(type).block_values;
    std::size_t mismatches = 0;
    for (std::size_t p = 0; p < w.panels(); ++p) {
      // the whole row, and a slice starting at the second block
      for (const std::size_t k_first : {std::size_t{0}, bv}) {
        const std::size_t kc = cols - k_first;
        attn::AlignedVector<float> panel(kc * attn::kPanelWidth);
        attn::widen_quantized_panel(w, p, k_first, kc, panel.data());
        for (std::size_t k = 0; k < kc; ++k) {
          for (std::size_t j = 0; j < attn::kPanelWidth; ++j) {
            const std::size_t row = p * attn::kPanelWidth + j;
            const float expected = row < rows ? want[row * cols + k_first + k] : 0.0f;
            // equal as numbers: a zero's sign may differ (quantized_linear.hpp)
            mismatches += !(panel[k * attn::kPanelWidth + j] == expected);
          }
        }
      }
    }
    CHECK(mismatches == 0);
  }
}

// The float product over the dequantized weights (linear_forward: the packed float kernels) is
// what the prompt kernel (more than one row) must give bit for bit: the same weights, each output
// summed in the same order over k. (The one-row kernel sums each group's quants before scaling
// them: within float32's summation bound, the next test cases.)
TEST_CASE(
    "quantized products of several rows equal the float product over the dequantized "
    "weights, bit for bit",
    "[quantized]") {
  std::mt19937 rng(36);
  for (const attn::GgmlType type : kTypes) {
    for (const std::size_t rows : {std::size_t{37}, std::size_t{2 * attn::kPanelWidth}}) {
      const std::size_t cols = odd_cols(type);
      INFO(attn::ggml_type_name(type) << " W [" << rows << ", " << cols << "]");
      const auto bytes = random_rows(type, rows, cols, rng);
      const attn::QuantizedMatrix w = matrix_of(type, rows, cols, bytes);
      const std::vector<float> weights = dequantized(type, bytes, rows * cols);
      const std::vector<float> bias = random_floats(rows, rng);
      for (const std::size_t m : {std::size_t{3}, std::size_t{13}}) {
        INFO("m " << m);
        const std::vector<float> x = random_floats(m * cols, rng);
        for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
          std::vector<float> want(m * rows), got(m * rows, -1.0f);
          attn::LinearScratch scratch;
          attn::linear_forward(x.data(), weights.data(), b, want.data(), m, cols, rows, scratch);
          attn::quantized_linear_forward(x.data(), w, b, got.data(), m, rows);
          CHECK(bit_mismatches(got, want) == 0);
        }
      }
    }
  }
}

TEST_CASE("a quantized product deeper than one cache block of k still sums in order",
          "[quantized]") {
  // k = 4352 (17 K-quant blocks): the prompt kernel widens slices of kMatmulDepthBlock values and
  // carries each output through C between them, as matmul_packed does
  std::mt19937 rng(37);
  for (const attn::GgmlType type : {attn::GgmlType::Q4_K, attn::GgmlType::Q8_0}) {
    INFO(attn::ggml_type_name(type));
    const std::size_t rows = 11, cols = 4352, m = 6;
    const auto bytes = random_rows(type, rows, cols, rng);
    const attn::QuantizedMatrix w = matrix_of(type, rows, cols, bytes);
    const std::vector<float> weights = dequantized(type, bytes, rows * cols);
    const std::vector<float> x = random_floats(m * cols, rng), bias = random_floats(rows, rng);
    std::vector<float> want(m * rows), got(m * rows);
    attn::LinearScratch scratch;
    attn::linear_forward(x.data(), weights.data(), bias.data(), want.data(), m, cols, rows,
                         scratch);
    attn::quantized_linear_forward(x.data(), w, bias.data(), got.data(), m, rows);
    CHECK(bit_mismatches(got, want) == 0);
  }
}

TEST_CASE(
    "F32, F16 and BF16 matrices: one row too is the float product over the widened values, "
    "bit for bit",
    "[quantized]") {
  // no groups to scale: the one-row kernel sums each output from its bias over k in order, as
  // matmul's float kernel does (a model's F32 or F16 GGUF weights give its .safetensors numbers)
  std::mt19937 rng(41);
  for (const attn::GgmlType type :
       {attn::GgmlType::F32, attn::GgmlType::F16, attn::GgmlType::BF16}) {
    for (const std::size_t rows : {std::size_t{37}, std::size_t{7 * attn::kPanelWidth}}) {
      INFO(attn::ggml_type_name(type) << ", " << rows << " rows");
      const std::size_t cols = 200;
      const auto bytes = random_rows(type, rows, cols, rng);
      const attn::QuantizedMatrix w = matrix_of(type, rows, cols, bytes);
      const std::vector<float> weights = dequantized(type, bytes, rows * cols);
      // x of |x| < 2¹⁶ with subnormals among them (F16's kernel then scales x: row_halves), and
      // x with one |x| past 2¹⁶ (it scales each weight)
      std::vector<float> small = random_floats(cols, rng), large = small;
      small[3] = 1e-40f;
      small[4] = -3e-39f;
      large[5] = 1e5f;
      const std::vector<float> bias = random_floats(rows, rng);
      for (const auto* x : {&small, &large}) {
        for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
          std::vector<float> want(rows), got(rows, -1.0f);
          attn::LinearScratch scratch;
          attn::linear_forward(x->data(), weights.data(), b, want.data(), 1, cols, rows, scratch);
          attn::quantized_linear_forward(x->data(), w, b, got.data(), 1, rows);
          CHECK(bit_mismatches(got, want) == 0);
        }
      }
    }
  }
}

TEST_CASE("quantized products give the same bits on one thread and two", "[quantized]") {
  if (attn::max_threads() < 2) SKIP("this build has no threads");
  std::mt19937 rng(38);
  for (const attn::GgmlType type : kTypes) {
    INFO(attn::ggml_type_name(type));
    const std::size_t rows = 9 * attn::kPanelWidth + 3, cols = odd_cols(type) * 2;
    const auto bytes = random_rows(type, rows, cols, rng);
    const attn::QuantizedMatrix w = matrix_of(type, rows, cols, bytes);
    for (const std::size_t m : {std::size_t{1}, std::size_t{7}}) {
      const std::vector<float> x = random_floats(m * cols, rng);
      std::vector<float> one(m * rows), two(m * rows);
      attn::quantized_linear_forward(x.data(), w, nullptr, one.data(), m, rows);
      {
        Threads threads(2);
        attn::quantized_linear_forward(x.data(), w, nullptr, two.data(), m, rows);
      }
      CHECK(bit_mismatches(one, two) == 0);
    }
  }
}

TEST_CASE("a weight matrix of parts is split over two threads as one product, with the same bits",
          "[quantized]") {
  if (attn::max_threads() < 2) SKIP("this build has no threads");
  // q | k | v of three types, large enough that two threads split the product (at least twice the
  // least part, kParallelRowMultiplyAdds or kParallelMultiplyAdds of work, for any panel width):
  // the split falls inside a part, and each part's panels are counted from its own first row.
  std::mt19937 rng(41);
  const std::size_t cols = 1024;
  const std::pair<attn::GgmlType, std::size_t> parts[] = {
      {attn::GgmlType::Q8_0, 323}, {attn::GgmlType::Q4_K, 517}, {attn::GgmlType::Q6_K, 201}};
  attn::QuantizedWeights w;
  w.cols = cols;
  for (const auto& [type, rows] : parts) {
    w.parts.push_back({w.rows, matrix_of(type, rows, cols, random_rows(type, rows, cols, rng))});
    w.rows += rows;
  }
  for (const std::size_t m : {std::size_t{1}, std::size_t{64}}) {
    INFO("rows of x: " << m);
    const std::vector<float> x = random_floats(m * cols, rng), bias = random_floats(w.rows, rng);
    std::vector<float> alone(m * w.rows), one(m * w.rows), two(m * w.rows);
    for (const auto& part : w.parts) {  // each part's product on its own, into its columns
      attn::quantized_linear_forward(x.data(), part.matrix, bias.data() + part.first_row,
                                     alone.data() + part.first_row, m, w.rows);
    }
    attn::quantized_linear_forward(x.data(), w, bias.data(), one.data(), m);
    {
      Threads threads(2);
      attn::quantized_linear_forward(x.data(), w, bias.data(), two.data(), m);
    }
    CHECK(bit_mismatches(one, alone) == 0);
    CHECK(bit_mismatches(two, alone) == 0);
  }
}

// Against float64: the scalar reference (ops/dequantize's values, sums in double). A float32 sum of
// n products is within γ_n · Σ|x·w| of the exact one (γ_n = n·u / (1 − n·u), u = 2⁻²⁴: Higham's
// bound for any summation order); each product is exact up to one more rounding, n + 1.
TEST_CASE("quantized products are within float32's summation bound of a float64 product",
          "[quantized]") {
  std::mt19937 rng(39);
  for (const attn::GgmlType type : kTypes) {
    INFO(attn::ggml_type_name(type));
    const std::size_t rows = 21, cols = odd_cols(type), m = 4;
    const auto bytes = random_rows(type, rows, cols, rng);
    const attn::QuantizedMatrix w = matrix_of(type, rows, cols, bytes);
    const std::vector<float> weights = dequantized(type, bytes, rows * cols);
    const std::vector<float> x = random_floats(m * cols, rng), bias = random_floats(rows, rng);
    std::vector<float> want(m * rows), got_one(rows), got(m * rows);
    attn::reference::quantized_linear_forward(x.data(), w, bias.data(), want.data(), m);
    attn::quantized_linear_forward(x.data(), w, bias.data(), got.data(), m, rows);
    attn::quantized_linear_forward(x.data(), w, bias.data(), got_one.data(), 1, rows);
    const double u = std::ldexp(1.0, -24), n = double(cols + 2);
    const double gamma = n * u / (1 - n * u);
    for (std::size_t r = 0; r < m; ++r) {
      for (std::size_t o = 0; o < rows; ++o) {
        double magnitude = std::abs(double(bias[o]));
        for (std::size_t i = 0; i < cols; ++i) {
          magnitude += std::abs(double(x[r * cols + i]) * double(weights[o * cols + i]));
        }
        const double bound = gamma * magnitude + 1e-30;
        INFO("row " << r << " output " << o);
        CHECK(std::abs(double(got[r * rows + o]) - double(want[r * rows + o])) <= bound);
        if (r == 0) CHECK(std::abs(double(got_one[o]) - double(want[o])) <= bound);
      }
    }
  }
}

TEST_CASE("a weight matrix of parts of different types multiplies each part into its rows",
          "[quantized]") {
  // a fused q | k | v whose tensors were quantized differently (Q4_K_M keeps v in Q6_K)
  std::mt19937 rng(40);
  const std::size_t cols = 512;
  const std::pair<attn::GgmlType, std::size_t> parts[] = {
      {attn::GgmlType::Q4_K, 24}, {attn::GgmlType::Q5_K, 5}, {attn::GgmlType::Q6_K, 13}};
  attn::QuantizedWeights w;
  w.cols = cols;
  std::vector<float> weights;
  for (const auto& [type, rows] : parts) {
    const auto bytes = random_rows(type, rows, cols, rng);
    w.parts.push_back({w.rows, matrix_of(type, rows, cols, bytes)});
    w.rows += rows;
    const auto values = dequantized(type, bytes, rows * cols);
    weights.insert(weights.end(), values.begin(), values.end());
  }
  CHECK(w.bytes() ==
        w.parts[0].matrix.bytes() + w.parts[1].matrix.bytes() + w.parts[2].matrix.bytes());
  for (const std::size_t m : {std::size_t{1}, std::size_t{5}}) {
    const std::vector<float> x = random_floats(m * cols, rng), bias = random_floats(w.rows, rng);
    std::vector<float> want(m * w.rows), got(m * w.rows);
    attn::LinearScratch scratch;
    attn::linear_forward(x.data(), weights.data(), bias.data(), want.data(), m, cols, w.rows,
                         scratch);
    attn::quantized_linear_forward(x.data(), w, bias.data(), got.data(), m);
    if (m > 1) {
      CHECK(bit_mismatches(got, want) == 0);  // the prompt kernel: the float product's bits
      continue;
    }
    // one row: within float32's summation bound (the one-row kernel scales each group's sum once)
    const double u = std::ldexp(1.0, -24), n = double(cols + 2), gamma = n * u / (1 - n * u);
    for (std::size_t o = 0; o < w.rows; ++o) {
      double magnitude = std::abs(double(bias[o]));
      for (std::size_t i = 0; i < cols; ++i) {
        magnitude += std::abs(double(x[i]) * double(weights[o * cols + i]));
      }
      INFO("output " << o);
      CHECK(std::abs(double(got[o]) - double(want[o])) <= gamma * magnitude);
    }
  }
  // any run of values, across the parts' boundaries
  std::vector<float> values(w.rows * cols - 700);
  w.dequantize_values(300, w.rows * cols - 400, values.data());
  CHECK(bit_mismatches(values, std::vector<float>(weights.begin() + 300, weights.end() - 400)) ==
        0);
}
