/* A stand-in for NVIDIA's libnvJitLink.so.12: the symbols' version node
   is the soname, as NVIDIA's is; 12.4 adds __nvJitLinkComplete_12_4. */
int __nvJitLinkCreate_12_1(void) { return 0; }
#ifdef V124
int __nvJitLinkComplete_12_4(void) { return 0; }
#endif
