<?php
// php-swoole serves the loadlab contract (servers/CONTRACT.md) with Swoole's
// HTTP server in SWOOLE_BASE mode: WORKER_NUM worker processes, each with its
// own event loop that accepts and serves its own connections, and one
// coroutine per request. /io waits with usleep(), which the runtime hooks
// (hook_flags) turn into a coroutine sleep that yields to the event loop.
declare(strict_types=1);

use Swoole\Http\Request;
use Swoole\Http\Response;
use Swoole\Http\Server;

const SERVER_NAME = 'php-swoole';
const MODEL = 'coroutine-per-request';
const IO_MS_MAX = 10000;
const CPU_N_MAX = 10000000;
// 0xcbf29ce484222325 (the FNV-1a offset basis) as a signed 64-bit PHP int.
const CPU_SEED = -3750763034362895579;
const WORKER_NUM_MAX = 1024;

const USERS = [
    [1, 'Ada Lovelace', 'ada.lovelace@example.com', 36, true],
    [2, 'Alan Turing', 'alan.turing@example.com', 41, true],
    [3, 'Grace Hopper', 'grace.hopper@example.com', 85, false],
    [4, 'Edsger Dijkstra', 'edsger.dijkstra@example.com', 72, true],
    [5, 'Barbara Liskov', 'barbara.liskov@example.com', 86, true],
    [6, 'Donald Knuth', 'donald.knuth@example.com', 88, false],
    [7, 'Margaret Hamilton', 'margaret.hamilton@example.com', 90, true],
    [8, 'Ken Thompson', 'ken.thompson@example.com', 83, true],
    [9, 'Frances Allen', 'frances.allen@example.com', 88, false],
    [10, 'Dennis Ritchie', 'dennis.ritchie@example.com', 70, true],
];

/**
 * The contract's xorshift loop. PHP ints are signed 64-bit: `<<` already
 * discards the bits shifted past bit 63, but `>>` is arithmetic, so the mask
 * clears the 7 sign-extended high bits to make it a logical shift.
 */
function cpu_hash(int $rounds): int
{
    $x = CPU_SEED;
    for ($i = 0; $i < $rounds; $i++) {
        $x ^= $i;
        $x ^= $x << 13;
        $x ^= ($x >> 7) & 0x01FFFFFFFFFFFFFF;
        $x ^= $x << 17;
    }
    return $x;
}

/** The first occurrence of a query parameter, URL-decoded; null when absent. */
function query_param(string $query, string $name): ?string
{
    if ($query === '') {
        return null;
    }
    foreach (explode('&', $query) as $pair) {
        $eq = strpos($pair, '=');
        $key = $eq === false ? $pair : substr($pair, 0, $eq);
        if (urldecode($key) === $name) {
            return $eq === false ? '' : urldecode(substr($pair, $eq + 1));
        }
    }
    return null;
}

/**
 * A contract parameter: returns [value, null] or [0, the prescribed error
 * message]. The digit count is checked before converting, so no input can
 * overflow the conversion.
 */
function int_param(string $query, string $name, int $max): array
{
    $raw = query_param($query, $name);
    if ($raw === null || $raw === '') {
        return [0, "parameter $name is required"];
    }
    if (strspn($raw, '0123456789') !== strlen($raw)) {
        return [0, "parameter $name must be a non-negative integer"];
    }
    $digits = ltrim($raw, '0');
    if (strlen($digits) > strlen((string) $max) || (int) $digits > $max) {
        return [0, "parameter $name must be at most $max"];
    }
    return [(int) $digits, null];
}

function send(Response $response, int $status, string $contentType, string $body): void
{
    $response->status($status);
    $response->header('Server', SERVER_NAME);
    $response->header('Content-Type', $contentType);
    // end() with the whole body: Swoole writes Content-Length, never chunks.
    $response->end($body);
}

function send_json(Response $response, int $status, mixed $value): void
{
    send($response, $status, 'application/json', json_encode($value, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR));
}

function send_error(Response $response, int $status, string $message): void
{
    send_json($response, $status, ['error' => $message]);
}

function route_plaintext(Request $request, Response $response): void
{
    send($response, 200, 'text/plain', 'Hello, World!');
}

// S1's 200-byte answer: "0123456789" twenty times.
const PLAINTEXT_200 = '0123456789' . '0123456789' . '0123456789' . '0123456789' . '0123456789'
    . '0123456789' . '0123456789' . '0123456789' . '0123456789' . '0123456789'
    . '0123456789' . '0123456789' . '0123456789' . '0123456789' . '0123456789'
    . '0123456789' . '0123456789' . '0123456789' . '0123456789' . '0123456789';

function route_plaintext200(Request $request, Response $response): void
{
    send($response, 200, 'text/plain', PLAINTEXT_200);
}

function route_json(Request $request, Response $response): void
{
    send_json($response, 200, ['message' => 'Hello, World!']);
}

function route_users(Request $request, Response $response): void
{
    $users = [];
    foreach (USERS as [$id, $name, $email, $age, $active]) {
        $users[] = ['id' => $id, 'name' => $name, 'email' => $email, 'age' => $age, 'active' => $active];
    }
    send_json($response, 200, $users);
}

function route_io(Request $request, Response $response): void
{
    [$ms, $problem] = int_param($request->server['query_string'] ?? '', 'ms', IO_MS_MAX);
    if ($problem !== null) {
        send_error($response, 400, $problem);
        return;
    }
    usleep($ms * 1000); // hooked: a coroutine sleep, the worker serves others meanwhile
    send_json($response, 200, ['io_ms' => $ms]);
}

function route_cpu(Request $request, Response $response): void
{
    [$n, $problem] = int_param($request->server['query_string'] ?? '', 'n', CPU_N_MAX);
    if ($problem !== null) {
        send_error($response, 400, $problem);
        return;
    }
    send_json($response, 200, ['n' => $n, 'hash' => sprintf('%u', cpu_hash($n))]);
}

function route_mixed(Request $request, Response $response): void
{
    $query = $request->server['query_string'] ?? '';
    [$n, $problem] = int_param($query, 'cpu', CPU_N_MAX);
    if ($problem === null) {
        [$ms, $problem] = int_param($query, 'io', IO_MS_MAX);
    }
    if ($problem !== null) {
        send_error($response, 400, $problem);
        return;
    }
    $hash = cpu_hash($n);
    usleep($ms * 1000);
    send_json($response, 200, ['n' => $n, 'hash' => sprintf('%u', $hash), 'io_ms' => $ms]);
}

function route_health(Request $request, Response $response): void
{
    global $settings;
    send_json($response, 200, [
        'server' => SERVER_NAME,
        'runtime' => 'php',
        'runtime_version' => PHP_VERSION,
        'model' => MODEL,
        'settings' => $settings,
        'contract' => 1,
        'swoole_version' => SWOOLE_VERSION,
        'swoole_mode' => 'SWOOLE_BASE',
        'hook_flags' => Swoole\Runtime::getHookFlags(),
        'worker_id' => $GLOBALS['server']->worker_id,
        'pid' => getmypid(),
    ]);
}

const ROUTES = [
    '/plaintext' => 'route_plaintext',
    '/plaintext200' => 'route_plaintext200',
    '/json' => 'route_json',
    '/api/users' => 'route_users',
    '/io' => 'route_io',
    '/cpu' => 'route_cpu',
    '/mixed' => 'route_mixed',
    '/health' => 'route_health',
];

function handle(Request $request, Response $response): void
{
    // path_info is request_uri URL-decoded (as Go's URL.Path), without the query.
    $handler = ROUTES[$request->server['path_info'] ?? ''] ?? null;
    if ($handler === null) {
        send_error($response, 404, 'not found');
        return;
    }
    $method = $request->server['request_method'] ?? '';
    if ($method !== 'GET' && $method !== 'HEAD') {
        $response->header('Allow', 'GET');
        send_error($response, 405, 'method not allowed');
        return;
    }
    $handler($request, $response);
}

function env_or(string $name, string $default): string
{
    $value = getenv($name);
    return $value === false || $value === '' ? $default : $value;
}

$host = env_or('HOST', '0.0.0.0');
$port = env_or('PORT', '8080');
$workerNum = env_or('WORKER_NUM', '1');
if (!ctype_digit($port) || (int) $port > 65535) {
    fwrite(STDERR, SERVER_NAME . ": PORT must be an integer from 0 to 65535, not '$port'\n");
    exit(2);
}
if (!ctype_digit($workerNum) || strlen($workerNum) > 4 || (int) $workerNum < 1 || (int) $workerNum > WORKER_NUM_MAX) {
    fwrite(STDERR, SERVER_NAME . ": WORKER_NUM must be an integer from 1 to " . WORKER_NUM_MAX . ", not '$workerNum'\n");
    exit(2);
}
$settings = ['WORKER_NUM' => (int) $workerNum, 'HOST' => $host, 'PORT' => $port];

$server = new Server($host, (int) $port, SWOOLE_BASE, str_contains($host, ':') ? SWOOLE_SOCK_TCP6 : SWOOLE_SOCK_TCP);
$server->set([
    'worker_num' => (int) $workerNum,
    'enable_coroutine' => true,       // each request runs in its own coroutine
    // usleep() & co. yield instead of blocking the worker. Every hook but
    // curl's: the image has no curl extension, whose hook would only warn.
    'hook_flags' => SWOOLE_HOOK_ALL & ~SWOOLE_HOOK_CURL,
    'max_request' => 0,               // never recycle workers
    'http_compression' => false,
    'open_tcp_nodelay' => true,
    'package_max_length' => 1 << 20,  // bound on a request (headers + body)
    'backlog' => 4096,
    // Close connections silent for 120 s (Go's IdleTimeout), so half-sent
    // requests cannot pile up forever; longer than any request may take.
    'heartbeat_check_interval' => 10,
    'heartbeat_idle_time' => 120,
    'log_level' => SWOOLE_LOG_WARNING,
    'daemonize' => false,             // no pid or log file: stdout/stderr only
]);

// The socket is bound by the constructor above (it throws when it cannot).
echo SERVER_NAME, ' PHP ', PHP_VERSION, ' Swoole ', SWOOLE_VERSION, " listening on $host:$port",
    " (SWOOLE_BASE, WORKER_NUM=$workerNum)\n";

$server->on('request', function (Request $request, Response $response): void {
    try {
        handle($request, $response);
    } catch (Throwable $error) {
        fwrite(STDERR, SERVER_NAME . ': ' . $error . "\n");
        if ($response->isWritable()) {
            send_error($response, 500, 'internal error');
        }
    }
});

$server->start();
