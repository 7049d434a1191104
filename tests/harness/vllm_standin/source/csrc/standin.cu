// STAND-IN of vLLM's CUDA kernels (tests/harness/vllm_standin/source): one kernel, so that the built
// extension carries device code for each architecture of TORCH_CUDA_ARCH_LIST, as vLLM's do.
__global__ void llmhost_standin_scale(float *x, float factor) { x[threadIdx.x] *= factor; }

extern "C" void llmhost_standin_launch(float *x, float factor) { llmhost_standin_scale<<<1, 32>>>(x, factor); }
