package sandbox

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"sync"
	"testing"
)

// TestProxyRefusesSharedAndSpecialAnswers: a listed name whose DNS answer is an address of the
// machine's other local networks is refused like a private one: the shared address space
// 100.64.0.0/10 (Tailscale's tailnet and its 100.100.100.100, carrier-grade NAT, many VPNs), this
// network 0.0.0.0/8, and IPv4 ones written as IPv6 (mapped, NAT64). A server's author who owns a
// listed name points it there to reach the person's private services through the proxy.
func TestProxyRefusesSharedAndSpecialAnswers(t *testing.T) {
	for _, answer := range []string{"100.100.100.100", "100.64.0.1", "100.127.255.254", "0.1.2.3", "::ffff:10.0.0.1", "64:ff9b::a00:1", "64:ff9b::7f00:1",
		"64:ff9b:1:a00:1::", "2002:a00:1::1", "2002:7f00:1::1", "2002:c0a8:101::1"} {
		var mu sync.Mutex
		var dialed []string
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			return nil, errors.New("not dialled in this test")
		}
		p := newProxy([]string{"api.example.com"}, dial, func(string) {})
		p.lookup = func(ctx context.Context, host string) ([]net.IPAddr, error) {
			return []net.IPAddr{{IP: net.ParseIP(answer)}}, nil
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go p.serve(ln)
		proxyURL, _ := neturl.Parse("http://" + ln.Addr().String())
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
		resp, err := c.Get("http://api.example.com/")
		code := 0
		if err == nil {
			code = resp.StatusCode
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		p.close()
		mu.Lock()
		if code != http.StatusForbidden || len(dialed) != 0 {
			t.Errorf("a listed name resolving to %s: status %d (%v), dialled %v; want 403 and no connection", answer, code, err, dialed)
		}
		mu.Unlock()
	}
}

// TestLocalKeepsPublic: the prefixes that can carry a local IPv4 address are judged by that
// address, not refused whole (but the NAT64 prefix for local use, which is local by definition).
func TestLocalKeepsPublic(t *testing.T) {
	for _, ip := range []string{"8.8.8.8", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1"} {
		if local(net.ParseIP(ip)) {
			t.Errorf("local(%s) = true, want false: a public address", ip)
		}
	}
}
