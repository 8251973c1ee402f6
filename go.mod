module github.com/praxis-tools/praxis

go 1.26.8

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	gopkg.in/yaml.v3 v3.0.1
	lukechampine.com/blake3 v1.4.1
)

require github.com/klauspost/cpuid/v2 v2.0.9 // indirect
