/* The two lines of CUDA 8's include/crt/host_config.h that limit GCC, as quoted in a porting note
 * (find_string id 57417265613, "CUDA 8's crt/host_config.h contains"). Older toolkits state a
 * major.minor limit. Copyright NVIDIA; quoted for tests. */
#if __GNUC__ > 5 || (__GNUC__ == 5 && __GNUC_MINOR__ > 3)
#error -- unsupported GNU version! gcc versions later than 5.3 are not supported!
#endif
