# The GEMM kernel choice honours a BLIS_ARCH_TYPE the user set (3 is BLIS 0.9's "haswell").
add_test(NAME dense.gemm_blis_arch_override
         COMMAND tensorkit_dense_tests --gtest_filter=Gemm.BlisArchTypeFromTheEnvironmentWins)
set_tests_properties(dense.gemm_blis_arch_override PROPERTIES ENVIRONMENT BLIS_ARCH_TYPE=3
                     LABELS dense)
