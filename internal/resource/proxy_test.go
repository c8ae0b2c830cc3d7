package resource

import (
	"net/url"
	"testing"

	"github.com/flintboot/flint/config"
)

func TestUseProxy(t *testing.T) {
	tests := []struct {
		noProxy []string
		url     string
		want    bool
	}{
		{nil, "http://example.com/", true},
		{nil, "http://localhost/", false},
		{nil, "http://127.0.0.1:8080/", false},
		{nil, "http://[::1]/", false},
		{[]string{"*"}, "http://example.com/", false},
		{[]string{"example.com"}, "http://example.com/", false},
		{[]string{"example.com"}, "http://www.example.com/", false},
		{[]string{"example.com"}, "http://notexample.com/", true},
		{[]string{".example.com"}, "http://example.com/", true},
		{[]string{".example.com"}, "http://a.example.com/", false},
		{[]string{"*.example.com"}, "http://a.example.com/", false},
		{[]string{"EXAMPLE.com"}, "http://Example.COM/", false},
		{[]string{"example.com:8080"}, "http://example.com:8080/", false},
		{[]string{"example.com:8080"}, "http://example.com/", true},
		{[]string{"example.com:443"}, "https://example.com/", false},
		{[]string{"10.0.0.0/8"}, "http://10.1.2.3/", false},
		{[]string{"10.0.0.0/8"}, "http://11.1.2.3/", true},
		{[]string{"192.168.1.1"}, "http://192.168.1.1/", false},
		{[]string{"192.168.1.1:81"}, "http://192.168.1.1/", true},
		{[]string{"[fd00::1]:80"}, "http://[fd00::1]/", false},
		{[]string{"fd00::/8"}, "http://[fd00::1]/", false},
		{[]string{"a.com, b.com", " c.com "}, "http://c.com/", false},
		{[]string{"a.com, b.com"}, "http://b.com/", false},
		{[]string{"", ","}, "http://b.com/", true},
	}
	for _, tt := range tests {
		u, _ := url.Parse(tt.url)
		if got := parseNoProxy(tt.noProxy).useProxy(u); got != tt.want {
			t.Errorf("noProxy %q: useProxy(%s) = %v, want %v", tt.noProxy, tt.url, got, tt.want)
		}
	}
}

func TestProxyConfig(t *testing.T) {
	str := func(s string) *string { return &s }
	c, err := newProxyConfig(config.Proxy{HTTPProxy: str("proxy.example.com:3128"), HTTPSProxy: str("https://secure.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	if c.http.String() != "http://proxy.example.com:3128" {
		t.Errorf("bare httpProxy = %s, want an http:// URL", c.http)
	}
	if c.https.String() != "https://secure.example.com" {
		t.Errorf("httpsProxy = %s", c.https)
	}
	if c, err := newProxyConfig(config.Proxy{}); c != nil || err != nil {
		t.Errorf("newProxyConfig(none) = %v, %v; want nil, nil", c, err)
	}
	if _, err := newProxyConfig(config.Proxy{HTTPProxy: str("http://[bad")}); err == nil {
		t.Error("newProxyConfig(http://[bad) succeeded")
	}
}
