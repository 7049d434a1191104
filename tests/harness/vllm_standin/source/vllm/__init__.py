"""STAND-IN vllm package built from source for tests (tests/harness/vllm_standin/source): no engine."""
