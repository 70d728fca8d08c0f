//go:build linux && !amd64

package seccomp

// legacyModeSyscalls: none; arm64 has only the *at forms.
var legacyModeSyscalls []modeSyscall
