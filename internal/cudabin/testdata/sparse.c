/* A stand-in for libcusparse.so.12 12.4, which needs nvJitLink 12.4. */
int __nvJitLinkCreate_12_1(void);
int __nvJitLinkComplete_12_4(void);
int cusparseCreate(void) { return __nvJitLinkCreate_12_1() + __nvJitLinkComplete_12_4(); }
