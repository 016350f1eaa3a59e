// Fusion<Cuda>'s generated kernels without a GPU (issue 14): the CUDA C++ of fused chains (fused_chain_source.hpp)
// compiled by NVRTC for compute_80, for every float op of the op table and every instruction kind, broadcast
// access and trailing sum; the key (what selects a kernel) and the parameter words (what varies between runs of
// one kernel). NVRTC needs no device, so this runs wherever the CUDA toolkit is; running the kernels is
// op_suite_fusion_cuda's and cuda_internals' (on a GPU).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "backends/cuda/cuda_api.hpp"
#include "backends/cuda/fused_chain.hpp"
#include "backends/cuda/fused_chain_source.hpp"
#include "engine/backend/ops.hpp"

namespace ember {
namespace {

using fusion::Access;
using fusion::InputKind;
using fusion::Instr;
using fusion::InstrKind;
using fusion::Program;

// Builds a program one instruction at a time; every value is at the output's shape unless given.
struct Builder {
  Program p;
  explicit Builder(Shape out) { p.shape = std::move(out); }
  int32_t input(InputKind kind, Shape s) {
    p.inputs.push_back({kind, s});
    return add({InstrKind::Input, static_cast<int32_t>(p.inputs.size() - 1), -1, -1, -1, 0.0, s});
  }
  int32_t add(Instr i) {
    if (i.shape.rank() == 0 && i.kind != InstrKind::Input) i.shape = p.shape;
    p.instrs.push_back(std::move(i));
    p.out = static_cast<int32_t>(p.instrs.size() - 1);
    return p.out;
  }
  int32_t unary(UnaryOp op, int32_t a) { return add({InstrKind::Unary, static_cast<int32_t>(op), a, -1, -1, 0.0, {}}); }
  int32_t scalar(ScalarOp op, int32_t a, double s) {
    return add({InstrKind::Scalar, static_cast<int32_t>(op), a, -1, -1, s, {}});
  }
  int32_t binary(BinaryOp op, int32_t a, int32_t b) {
    return add({InstrKind::Binary, static_cast<int32_t>(op), a, b, -1, 0.0, {}});
  }
};

std::string ptx_of(const Program& p) {
  const std::string src = cuda::fused_chain_cuda(p, fusion::merge_layout(p));
  try {
    return cuda::compile_fused_ptx(src, 80);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n--- source ---\n" << src;
    return {};
  }
}

void expect_kernel(const std::string& ptx) {
  EXPECT_NE(ptx.find(".entry ember_fused_chain"), std::string::npos) << "no kernel entry in the PTX";
}

// Every unary, scalar and binary op the op table defines for floats, chained in one kernel: each op's device
// function (float_math.cuh, as the eager kernels call it) compiles under NVRTC with the enums made from ops.def.
TEST(CudaFusedSource, EveryFloatOpCompilesWithNvrtc) {
  Builder b(Shape{4, 5});
  int32_t r = b.input(InputKind::Float, Shape{4, 5});
  const int32_t other = b.input(InputKind::Float, Shape{4, 5});
  int ops = 0;
  for (int32_t v = 0; v < op_count<UnaryOp>(); ++v)
    if (op_kinds(static_cast<UnaryOp>(v)) != OpKinds::Bool) r = b.unary(static_cast<UnaryOp>(v), r), ++ops;
  for (int32_t v = 0; v < op_count<ScalarOp>(); ++v)
    if (op_kinds(static_cast<ScalarOp>(v)) != OpKinds::Bool) r = b.scalar(static_cast<ScalarOp>(v), r, 0.5), ++ops;
  for (int32_t v = 0; v < op_count<BinaryOp>(); ++v)
    if (op_kinds(static_cast<BinaryOp>(v)) != OpKinds::Bool) r = b.binary(static_cast<BinaryOp>(v), r, other), ++ops;
  EXPECT_GT(ops, 40);
  const std::string src = cuda::fused_chain_cuda(b.p, fusion::merge_layout(b.p));
  // Each op by name in a comment beside its statement, e.g. "// gelu", so the source shows what it computes.
  EXPECT_NE(src.find("unary_f32<static_cast<UnaryOp>(17)>(r"), std::string::npos);
  EXPECT_NE(src.find("// gelu"), std::string::npos);
  expect_kernel(ptx_of(b.p));
}

// Int and Bool inputs (cast, where, mask_fill), a broadcast row (strided), a scalar tensor (constant), fill,
// expand and the fused GELU / ReLU backward steps, in one kernel.
TEST(CudaFusedSource, EveryInstructionKindAndAccessCompiles) {
  Builder b(Shape{3, 4, 5});
  const int32_t x = b.input(InputKind::Float, Shape{3, 4, 5});
  const int32_t row = b.input(InputKind::Float, Shape{4, 1});  // strided: broadcast along dims 0 and 2
  const int32_t one = b.input(InputKind::Float, Shape{1});     // constant
  const int32_t ints = b.input(InputKind::Int, Shape{3, 4, 5});
  const int32_t mask = b.input(InputKind::Bool, Shape{3, 4, 5});
  const int32_t fill = b.add({InstrKind::Fill, 0, -1, -1, -1, 2.5, {}});
  const int32_t cast = b.add({InstrKind::Cast, 0, ints, -1, -1, 0.0, {}});
  const int32_t wide = b.add({InstrKind::Expand, 0, row, -1, -1, 0.0, {}});
  int32_t r = b.binary(BinaryOp::Add, x, wide);
  r = b.binary(BinaryOp::Mul, r, one);
  r = b.add({InstrKind::Where, 0, mask, r, cast, 0.0, {}});
  r = b.add({InstrKind::MaskFill, 0, r, mask, -1, -1.0, {}});
  r = b.add({InstrKind::GeluBackward, 0, r, fill, -1, 0.0, {}});
  r = b.add({InstrKind::ReluBackward, 0, x, r, -1, 0.0, {}});
  const fusion::MergedLayout l = fusion::merge_layout(b.p);
  ASSERT_EQ(l.access, (std::vector<Access>{Access::Same, Access::Strided, Access::Constant, Access::Same, Access::Same}));
  const std::string src = cuda::fused_chain_cuda(b.p, l);
  EXPECT_NE(src.find("const long long r3 = in3[i];"), std::string::npos) << "Int inputs are int64";
  EXPECT_NE(src.find("const unsigned char r4 = in4[i];"), std::string::npos) << "Bool inputs are uint8";
  EXPECT_NE(src.find("in1[o1]"), std::string::npos) << "the broadcast row reads through its strides";
  EXPECT_NE(src.find("in2[0]"), std::string::npos) << "the one-element input reads element 0";
  expect_kernel(ptx_of(b.p));
}

// A trailing sum: one partial per block, reduced in shared memory.
TEST(CudaFusedSource, TrailingSumWritesOnePartialPerBlock) {
  Builder b(Shape{1000});
  const int32_t x = b.input(InputKind::Float, Shape{1000});
  b.binary(BinaryOp::Mul, x, x);
  b.p.reduce_all = ReduceOp::Sum;
  const std::string src = cuda::fused_chain_cuda(b.p, fusion::merge_layout(b.p));
  EXPECT_NE(src.find("y[blockIdx.x] = partial[0];"), std::string::npos);
  EXPECT_EQ(src.find("y[i] ="), std::string::npos) << "a reduced chain never stores its output";
  expect_kernel(ptx_of(b.p));
}

// What varies between runs of one structure is in the words, not the key: the batch size, a scalar's value and a
// broadcast input's strides select the same kernel; another op or another way of reading an input does not.
TEST(CudaFusedSource, KeyIsTheStructureAndWordsCarryTheRest) {
  auto program = [](int64_t batch, double s, ScalarOp op, Shape bias) {
    Builder b(Shape{batch, 8});
    const int32_t x = b.input(InputKind::Float, Shape{batch, 8});
    const int32_t c = b.input(InputKind::Float, bias);
    b.scalar(op, b.binary(BinaryOp::Add, x, c), s);
    return b.p;
  };
  const Program a = program(4, 0.5, ScalarOp::Mul, Shape{8}), same = program(64, -3.0, ScalarOp::Mul, Shape{8});
  auto key = [](const Program& p) { return cuda::fused_chain_key(p, fusion::merge_layout(p)); };
  EXPECT_EQ(key(a), key(same));
  EXPECT_NE(key(a), key(program(4, 0.5, ScalarOp::Add, Shape{8})));
  EXPECT_EQ(key(a), key(program(4, 0.5, ScalarOp::Mul, Shape{4, 1}))) << "a column, not a row: other strides";
  EXPECT_NE(key(a), key(program(4, 0.5, ScalarOp::Mul, Shape{1}))) << "one element: read without strides";
  EXPECT_NE(key(a), key(program(4, 0.5, ScalarOp::Mul, Shape{4, 8}))) << "read in place";

  // [4, 8] + [8]: the bias is strided over the merged dims [4, 8] with strides {0, 1}.
  const fusion::MergedLayout l = fusion::merge_layout(a);
  float out = 0.0f, x = 0.0f, c = 0.0f;
  const cuda::FusedWords w = cuda::fused_chain_words(a, l, &out, {&x, &c});
  ASSERT_EQ(w.words.size(), cuda::fused_chain_word_count(a, l));
  uint32_t half;
  const float h = 0.5f;
  std::memcpy(&half, &h, 4);
  EXPECT_EQ(w.words, (std::vector<uint64_t>{reinterpret_cast<uint64_t>(&out), reinterpret_cast<uint64_t>(&x),
                                            reinterpret_cast<uint64_t>(&c), 32, 4, 8, 0, 1, half}));
  EXPECT_EQ(w.scalars_at, 8u);
  // The generated source reads its words at those positions.
  const std::string src = cuda::fused_chain_cuda(a, l);
  EXPECT_NE(src.find("const long long n = static_cast<long long>(p.w[3]);"), std::string::npos) << src;
  EXPECT_NE(src.find("__uint_as_float(static_cast<unsigned>(p.w[8]))"), std::string::npos) << src;
  EXPECT_NE(src.find("unsigned long long w[9];"), std::string::npos) << src;
}

TEST(CudaFusedSource, NvrtcErrorsCarryTheCompilerLog) {
  try {
    cuda::compile_fused_ptx("extern \"C\" __global__ void ember_fused_chain() { undeclared_name(); }", 80);
    FAIL() << "a source that cannot compile was accepted";
  } catch (const cuda::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("undeclared_name"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ember
