package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/mcpbridge/safetext"
)

// proxy is the host's HTTP proxy for a server whose network is a domain list. The listener lives
// in the server's network namespace (the launcher made it there and passed it over), so the
// server reaches nothing else; each connection goes only where the list allows, and the TCP
// destination is fixed per connection (a second request on it cannot change host).
type proxy struct {
	allow  []string
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	report func(string)
	// lookup resolves a listed name before the dial, which then goes to the address checked
	// (nil when Options.Dial was given: that dialer resolves).
	lookup func(ctx context.Context, host string) ([]net.IPAddr, error)

	mu    sync.Mutex // guards ln, conns, done
	ln    net.Listener
	conns map[net.Conn]struct{}
	done  bool
}

func newProxy(allow []string, dial func(ctx context.Context, network, addr string) (net.Conn, error), report func(string)) *proxy {
	var lookup func(ctx context.Context, host string) ([]net.IPAddr, error)
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		dial, lookup = d.DialContext, net.DefaultResolver.LookupIPAddr
	}
	return &proxy{allow: allow, dial: dial, lookup: lookup, report: report, conns: map[net.Conn]struct{}{}}
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		ln.Close()
		return
	}
	p.ln = ln
	p.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c, true) {
			c.Close()
			return
		}
		go func() {
			defer p.track(c, false)
			defer c.Close()
			p.handle(c)
		}()
	}
}

// track adds or removes a live connection; it reports false once the proxy is closed.
func (p *proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.conns, c)
		return true
	}
	if p.done {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if p.ln != nil {
		p.ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
}

func (p *proxy) handle(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if req.Method == http.MethodConnect {
			p.tunnel(c, br, req)
			return
		}
		// Plain HTTP: every request is checked and sent on a connection of its own, so a second
		// request on a kept-alive connection cannot name another host (which a shared front
		// server would route by its Host header).
		if !p.forward(c, req) {
			return
		}
	}
}

// check reports whether host:port is on the list, and reports a refusal.
func (p *proxy) check(c net.Conn, host, port string) (string, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	addr := net.JoinHostPort(host, port)
	if !allowed(p.allow, host, port) {
		p.report(fmt.Sprintf("blocked: connection to %s (not on the server's network list)", safetext.Line(addr)))
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n") // ignore error
		return addr, false
	}
	return addr, true
}

func (p *proxy) dialUp(c net.Conn, addr string) net.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if p.lookup != nil {
		checked, ok := p.resolve(ctx, c, addr)
		if !ok {
			return nil
		}
		addr = checked
	}
	up, err := p.dial(ctx, "tcp", addr)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n") // ignore error
		return nil
	}
	if !p.track(up, true) {
		up.Close()
		return nil
	}
	return up
}

// resolve looks a listed name up and refuses one that leads to this machine or its local
// networks (loopback, private, link-local, unspecified): a name the list allows must not become a
// way to the host's own services (a DNS answer of 127.0.0.1). An entry that names the address
// itself, or localhost, allows it. It returns the address to dial, so the check is what is used.
func (p *proxy) resolve(ctx context.Context, c net.Conn, addr string) (string, bool) {
	host, port, _ := net.SplitHostPort(addr) // ignore error: addr was joined by check
	if ip := net.ParseIP(host); ip != nil || host == "localhost" {
		return addr, true // listed as an address (or localhost): what the user wrote
	}
	ips, err := p.lookup(ctx, host)
	if err != nil || len(ips) == 0 {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n") // ignore error
		return "", false
	}
	for _, ip := range ips {
		if !local(ip.IP) {
			return net.JoinHostPort(ip.IP.String(), port), true
		}
	}
	p.report(fmt.Sprintf("blocked: connection to %s (it leads to %s, an address on this machine or its local network)", safetext.Line(addr), ips[0].IP))
	io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n") // ignore error
	return "", false
}

func local(ip net.IP) bool {
	switch {
	case nat64Local.Contains(ip):
		return true // a NAT64 prefix for a local network's own use (RFC 8215)
	case nat64.Contains(ip):
		ip = ip[12:16] // the IPv4 address a NAT64 gateway would reach
	case sixToFour.Contains(ip):
		ip = net.IP(ip[2:6]) // the IPv4 address a 6to4 relay would reach
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	ip4 := ip.To4()
	return ip4 != nil && (ip4[0] == 0 || sharedSpace.Contains(ip4))
}

// Local networks that net.IP's predicates do not name: the shared address space (carrier-grade
// NAT, and Tailscale's tailnet with its 100.100.100.100), IPv4 reached through the well-known
// NAT64 prefix or a 6to4 address, and the NAT64 prefix for local use. (0.0.0.0/8, "this
// network", is checked by its first byte.)
var (
	sharedSpace = net.IPNet{IP: net.IPv4(100, 64, 0, 0).To4(), Mask: net.CIDRMask(10, 32)}
	nat64       = net.IPNet{IP: net.ParseIP("64:ff9b::"), Mask: net.CIDRMask(96, 128)}
	nat64Local  = net.IPNet{IP: net.ParseIP("64:ff9b:1::"), Mask: net.CIDRMask(48, 128)}
	sixToFour   = net.IPNet{IP: net.ParseIP("2002::"), Mask: net.CIDRMask(16, 128)}
)

// tunnel serves CONNECT: the TCP destination is checked; what runs inside (TLS) is the server's.
func (p *proxy) tunnel(c net.Conn, br *bufio.Reader, req *http.Request) {
	host, port, err := net.SplitHostPort(req.RequestURI)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n") // ignore error
		return
	}
	addr, ok := p.check(c, host, port)
	if !ok {
		return
	}
	up := p.dialUp(c, addr)
	if up == nil {
		return
	}
	defer p.track(up, false)
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(up, br) // ignore error: either side closing ends the tunnel
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite() // ignore error
		}
		close(done)
	}()
	io.Copy(c, up) // ignore error
	c.Close()
	<-done
}

// forward sends one plain HTTP request and copies its response back; false ends the connection.
func (p *proxy) forward(c net.Conn, req *http.Request) bool {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n") // ignore error
		return false
	}
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	addr, ok := p.check(c, req.URL.Hostname(), port)
	if !ok {
		return false
	}
	up := p.dialUp(c, addr)
	if up == nil {
		return false
	}
	defer p.track(up, false)
	defer up.Close()
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Host = req.URL.Host // the Host header is the checked name, whatever the request said
	req.Close = true
	if err := req.Write(up); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(up), req)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n") // ignore error
		return false
	}
	defer resp.Body.Close()
	// A body that ends only when the connection does must end the client's connection too.
	keep := resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0
	resp.Close = !keep
	return resp.Write(c) == nil && keep
}

// allowed matches host:port against the list: "host" allows ports 80 and 443, "host:port" that
// port; "*.example.com" any subdomain of example.com (not example.com itself).
func allowed(list []string, host, port string) bool {
	for _, e := range list {
		eh, ep := e, ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			eh, ep = h, p
		}
		if ep == "" {
			if port != "80" && port != "443" {
				continue
			}
		} else if ep != port {
			continue
		}
		if suffix, ok := strings.CutPrefix(eh, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
			continue
		}
		if eh == host {
			return true
		}
		if a, b := net.ParseIP(eh), net.ParseIP(host); a != nil && b != nil && a.Equal(b) {
			return true
		}
	}
	return false
}

// proxyEnv points every usual client at the proxy and drops any way around it.
func proxyEnv(env []string, url string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "NPM_CONFIG_PROXY", "NPM_CONFIG_HTTPS_PROXY", "NPM_CONFIG_NOPROXY":
			continue
		}
		out = append(out, kv)
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "npm_config_proxy", "npm_config_https_proxy"} {
		out = append(out, k+"="+url)
	}
	// Node's own fetch honours the variables only when asked (Node 24+).
	return append(out, "NODE_USE_ENV_PROXY=1")
}
