// The schemas of torch.ops.tensorkit.*. Where FBGEMM has the operator, the schema is FBGEMM's
// (torch.ops.fbgemm.*), so that one replaces the other; embedding_bag takes
// torch.nn.functional.embedding_bag's arguments. The CPU kernels, and the CUDA kernels of the
// operators with a device path, are registered beside each operator's body; fake kernels, autograd
// and dense_to_jagged (composite) are registered in Python by tensorkit.torch.
#include "tensorkit/embed/torch/torch_glue.h"

STABLE_TORCH_LIBRARY(tensorkit, m) {
  m.def("asynchronous_complete_cumsum(Tensor t_in) -> Tensor");
  m.def(
      "jagged_to_padded_dense(Tensor values, Tensor[] offsets, SymInt[] max_lengths, "
      "float padding_value=0) -> Tensor");
  m.def(
      "jagged_to_padded_dense_backward(Tensor grad_output, Tensor[] offsets, SymInt total_L) "
      "-> Tensor");
  m.def(
      "dense_to_jagged(Tensor dense, Tensor[] x_offsets, SymInt? total_L=None) -> (Tensor, "
      "Tensor[])");
  m.def(
      "dense_to_jagged_forward(Tensor dense, Tensor[] x_offsets, SymInt? total_L=None) -> Tensor");
  m.def(
      "permute_2D_sparse_data(Tensor permute, Tensor lengths, Tensor values, Tensor? weights=None, "
      "SymInt? permuted_lengths_sum=None) -> (Tensor, Tensor, Tensor?)");
  m.def(
      "embedding_bag(Tensor input, Tensor weight, Tensor? offsets=None, str mode=\"mean\", "
      "Tensor? per_sample_weights=None, bool include_last_offset=False, int? padding_idx=None, "
      "bool sparse=False) -> Tensor");
  m.def(
      "embedding_bag_backward(Tensor grad, Tensor input, Tensor weight, Tensor? offsets, str mode, "
      "Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> Tensor");
  m.def(
      "block_bucketize_sparse_features(Tensor lengths, Tensor indices, bool bucketize_pos, "
      "bool sequence, Tensor block_sizes, SymInt my_size, Tensor? weights=None, "
      "Tensor? batch_size_per_feature=None, SymInt max_B=-1, Tensor[]? block_bucketize_pos=None, "
      "bool keep_orig_idx=False, Tensor? total_num_blocks=None, "
      "Tensor? keep_orig_idx_per_feature=None) -> (Tensor, Tensor, Tensor?, Tensor?, Tensor?)");
  m.def(
      "embedding_bags(Tensor[] weights, Tensor values, Tensor lengths, str[] modes, "
      "Tensor? per_sample_weights=None) -> Tensor");
  m.def(
      "embedding_bags_backward(Tensor grad, Tensor[] weights, Tensor values, Tensor lengths, "
      "str[] modes, Tensor? per_sample_weights) -> Tensor[]");
  m.def(
      "embedding_bag_sparse_backward(Tensor grad, Tensor input, Tensor weight, Tensor? offsets, "
      "str mode, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) "
      "-> (Tensor, Tensor)");
  m.def(
      "fill_empty_rows(Tensor indices, Tensor values, int[] dense_shape, Tensor default_value) "
      "-> (Tensor, Tensor, Tensor, Tensor)");
  m.def("fill_empty_rows_grad(Tensor reverse_index_map, Tensor grad_values) -> (Tensor, Tensor)");
  m.def(
      "segment_reduce(Tensor data, Tensor segment_ids, SymInt num_segments, str reduce=\"sum\", "
      "bool sorted=True) -> Tensor");
  m.def(
      "segment_reduce_backward(Tensor grad, Tensor segment_ids, SymInt num_rows, str reduce) "
      "-> Tensor");
  m.def("bucketize(Tensor values, Tensor boundaries, Tensor? offsets=None) -> Tensor");
}
