package allowlist

import "strings"

// Env returns the proxy environment variables a child needs to use a
// proxy listening on addr ("127.0.0.1:3128"), as "KEY=value" strings:
// HTTP_PROXY, HTTPS_PROXY, ALL_PROXY in upper and lower case set to
// "http://addr", and NO_PROXY/no_proxy set empty so an inherited value
// cannot exempt hosts (which would then fail anyway). curl reads only the
// lower-case http_proxy (CGI "httpoxy" defence), hence both forms.
func Env(addr string) []string {
	u := "http://" + addr
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, k+"="+u, strings.ToLower(k)+"="+u)
	}
	return append(env, "NO_PROXY=", "no_proxy=")
}
