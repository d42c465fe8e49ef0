package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"slices"
	"sync"
	"testing"
)

// TestDomainListThroughProxy: a listed name (a loopback server named by the proxy's dialer)
// answers, an unlisted one is refused by the proxy and reported in one sentence, and a direct
// connection to the same loopback server fails (the server's network namespace has nothing else).
func TestDomainListThroughProxy(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, "hello from "+r.Host)
	}))
	defer srv.Close()
	names := map[string]string{"allowed.test:80": srv.Listener.Addr().String(), "evil.test:80": srv.Listener.Addr().String(), "evil.test:443": srv.Listener.Addr().String()}
	var mu sync.Mutex
	var reports []string
	opts := Options{
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			to, ok := names[addr]
			if !ok {
				return nil, fmt.Errorf("test resolver: no %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, to)
		},
		Report: func(s string) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, s)
		},
	}
	okActions := []string{"get:http://allowed.test/hi"}
	escapes := []string{"get:http://evil.test/", "get:https://evil.test/", "connect:" + srv.Listener.Addr().String()}
	actions := append(append(append(append([]string{}, okActions...), escapes...), "fork"), append(okActions, escapes...)...)
	got := runConfined(t, w, Profile{Network: Network{Mode: NetDomains, Domains: []string{"allowed.test", "*.example.com"}}}, opts, actions...)
	for _, prefix := range []string{"", "grandchild "} {
		for _, a := range okActions {
			if r := got[prefix+a]; !r.OK || r.Body != "hello from allowed.test" {
				t.Errorf("%s%s: %+v", prefix, a, r)
			}
		}
		for _, a := range escapes {
			if r, ok := got[prefix+a]; !ok || r.OK {
				t.Errorf("%s%s: escaped or missing: %+v", prefix, a, r)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{
		"blocked: connection to evil.test:80 (not on the server's network list)",
		"blocked: connection to evil.test:443 (not on the server's network list)",
	} {
		if !slices.Contains(reports, want) {
			t.Errorf("no report %q in %q", want, reports)
		}
	}
}

// TestFullNetwork: "network": true reaches the host's loopback; files stay confined.
func TestFullNetwork(t *testing.T) {
	requireLandlock(t)
	w := newWorld(t)
	ln := listenDropping(t, "tcp", "127.0.0.1:0")
	got := runConfined(t, w, Profile{Network: Network{Mode: NetAll}}, Options{},
		"connect:"+ln.Addr().String(), "read:"+w.token)
	if r := got["connect:"+ln.Addr().String()]; !r.OK {
		t.Errorf("connect with the full network: %+v", r)
	}
	if r := got["read:"+w.token]; r.OK {
		t.Errorf("read the token file with the full network")
	}
}

func TestAllowed(t *testing.T) {
	list := []string{"api.github.com", "*.example.com", "localhost:8080", "10.1.2.3"}
	for _, tc := range []struct {
		host, port string
		want       bool
	}{
		{"api.github.com", "443", true},
		{"api.github.com", "80", true},
		{"api.github.com", "22", false},
		{"github.com", "443", false},
		{"evil-api.github.com", "443", false},
		{"a.example.com", "443", true},
		{"a.b.example.com", "443", true},
		{"example.com", "443", false},
		{"badexample.com", "443", false},
		{"localhost", "8080", true},
		{"localhost", "443", false},
		{"10.1.2.3", "443", true},
	} {
		if got := allowed(list, tc.host, tc.port); got != tc.want {
			t.Errorf("allowed(%s:%s) = %v, want %v", tc.host, tc.port, got, tc.want)
		}
	}
}

// TestProxyRefusesLocalAnswers: a listed name whose DNS answer is this machine (or a private
// network) is refused and reported; the dial goes to the address checked, not a second lookup.
func TestProxyRefusesLocalAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, "local service")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var reports []string
	p := newProxy([]string{"rebind.example.com:" + port, "127.0.0.1:" + port}, nil, func(s string) { reports = append(reports, s) })
	p.lookup = func(ctx context.Context, host string) ([]net.IPAddr, error) {
		return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.serve(ln)
	defer p.close()
	get := func(url string) (int, string) {
		proxyURL, _ := neturl.Parse("http://" + ln.Addr().String())
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
		resp, err := c.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://rebind.example.com:" + port + "/"); code != http.StatusForbidden {
		t.Errorf("a listed name resolving to loopback: %d %q", code, body)
	}
	if want := "blocked: connection to rebind.example.com:" + port + " (it leads to 127.0.0.1, an address on this machine or its local network)"; !slices.Contains(reports, want) {
		t.Errorf("reports %q lack %q", reports, want)
	}
	// The address written in the list is the user's choice.
	if code, body := get("http://127.0.0.1:" + port + "/"); code != 200 || body != "local service" {
		t.Errorf("a listed address: %d %q", code, body)
	}
}
