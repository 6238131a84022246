// ggml's type table (ids, names, block sizes), see ggml_blocks.hpp.
#include "attention/ops/ggml_blocks.hpp"

#include "attention/table_row.hpp"

namespace attn {

namespace {

// ggml.c's type_traits: values per block and bytes per block.
constexpr GgmlTypeInfo kTypes[] = {
    {GgmlType::F32, "F32", 1, 4},
    {GgmlType::F16, "F16", 1, 2},
    {GgmlType::Q4_0, "Q4_0", 32, 18},
    {GgmlType::Q4_1, "Q4_1", 32, 20},
    {GgmlType::Q5_0, "Q5_0", 32, 22},
    {GgmlType::Q5_1, "Q5_1", 32, 24},
    {GgmlType::Q8_0, "Q8_0", 32, 34},
    {GgmlType::Q8_1, "Q8_1", 32, 36},
    {GgmlType::Q2_K, "Q2_K", 256, 84},
    {GgmlType::Q3_K, "Q3_K", 256, 110},
    {GgmlType::Q4_K, "Q4_K", 256, 144},
    {GgmlType::Q5_K, "Q5_K", 256, 176},
    {GgmlType::Q6_K, "Q6_K", 256, 210},
    {GgmlType::Q8_K, "Q8_K", 256, 292},
    {GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66},
    {GgmlType::IQ2_XS, "IQ2_XS", 256, 74},
    {GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98},
    {GgmlType::IQ1_S, "IQ1_S", 256, 50},
    {GgmlType::IQ4_NL, "IQ4_NL", 32, 18},
    {GgmlType::IQ3_S, "IQ3_S", 256, 110},
    {GgmlType::IQ2_S, "IQ2_S", 256, 82},
    {GgmlType::IQ4_XS, "IQ4_XS", 256, 136},
    {GgmlType::I8, "I8", 1, 1},
    {GgmlType::I16, "I16", 1, 2},
    {GgmlType::I32, "I32", 1, 4},
    {GgmlType::I64, "I64", 1, 8},
    {GgmlType::F64, "F64", 1, 8},
    {GgmlType::IQ1_M, "IQ1_M", 256, 56},
    {GgmlType::BF16, "BF16", 1, 2},
    {GgmlType::TQ1_0, "TQ1_0", 256, 54},
    {GgmlType::TQ2_0, "TQ2_0", 256, 66},
    {GgmlType::MXFP4, "MXFP4", 32, 17},
};

}  // namespace

const GgmlTypeInfo* find_ggml_type(std::uint32_t id) {
  return find_row(kTypes, &GgmlTypeInfo::type, static_cast<GgmlType>(id));
}

const GgmlTypeInfo& ggml_type_info(GgmlType type) {
  return *find_row(kTypes, &GgmlTypeInfo::type, type);  // every enumerator has its row
}

const char* known_ggml_type_names() {
  return "F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, "
         "IQ2_XXS, IQ2_XS, IQ3_XXS, IQ1_S, IQ4_NL, IQ3_S, IQ2_S, IQ4_XS, I8, I16, I32, I64, F64, "
         "IQ1_M, BF16, TQ1_0, TQ2_0, MXFP4";
}

}  // namespace attn
