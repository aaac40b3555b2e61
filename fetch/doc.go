// Package fetch reads NVIDIA's redistributable index and manifests, selects components for a platform, and downloads, verifies, caches and safely extracts their archives into a directory the caller supplies.
package fetch
