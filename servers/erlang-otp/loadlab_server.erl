%% erlang-otp: OTP's gen_tcp with one Erlang process per connection; no Hex
%% packages, no framework. The kernel's http_bin packet mode parses requests.
%% See README.md and ../CONTRACT.md.
-module(loadlab_server).
-export([main/0, accept_loop/1, connection/1]).

-define(NAME, <<"erlang-otp">>).
-define(IDLE_MS, 120000).

main() ->
    Host = os:getenv("HOST", "0.0.0.0"),
    Port = list_to_integer(os:getenv("PORT", "8080")),
    {ok, Addr} = inet:parse_address(Host),
    {ok, Listen} = gen_tcp:listen(Port, [binary, {ip, Addr}, {packet, http_bin}, {active, false},
                                         {reuseaddr, true}, {backlog, 4096}, {nodelay, true},
                                         {packet_size, 16384}]),
    io:format(standard_error, "erlang-otp OTP ~s erts ~s listening on ~s:~b~n",
              [erlang:system_info(otp_release), erlang:system_info(version), Host, Port]),
    accept_loop(Listen).

%% One acceptor; every accepted socket gets its own process (the model).
accept_loop(Listen) ->
    case gen_tcp:accept(Listen) of
        {ok, Sock} ->
            Pid = spawn(?MODULE, connection, [Sock]),
            ok = gen_tcp:controlling_process(Sock, Pid),
            Pid ! go;
        {error, _} -> ok
    end,
    accept_loop(Listen).

connection(Sock) ->
    receive go -> ok end,
    request(Sock).

request(Sock) ->
    case gen_tcp:recv(Sock, 0, ?IDLE_MS) of
        {ok, {http_request, Method, {abs_path, Target}, Version}} ->
            headers(Sock, Method, Target, Version, #{});
        {ok, {http_request, _, _, _}} -> bad_request(Sock);
        {ok, {http_error, _}} -> bad_request(Sock);
        {ok, _} -> bad_request(Sock);
        {error, _} -> gen_tcp:close(Sock)
    end.

headers(Sock, Method, Target, Version, Hs) ->
    case gen_tcp:recv(Sock, 0, ?IDLE_MS) of
        {ok, {http_header, _, Field, _, Value}} ->
            Key = string:lowercase(if is_atom(Field) -> atom_to_binary(Field); true -> Field end),
            headers(Sock, Method, Target, Version, maps:put(Key, Value, Hs));
        {ok, http_eoh} -> dispatch(Sock, Method, Target, Version, Hs);
        {ok, _} -> bad_request(Sock);
        {error, _} -> gen_tcp:close(Sock)
    end.

bad_request(Sock) ->
    gen_tcp:send(Sock, <<"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n">>),
    gen_tcp:close(Sock).

dispatch(Sock, Method, Target, Version, Hs) ->
    Close = wants_close(Version, maps:get(<<"connection">>, Hs, <<>>)),
    case skip_body(Sock, maps:get(<<"content-length">>, Hs, <<"0">>)) of
        ok ->
            {Path, Query} = case binary:split(Target, <<"?">>) of [P, Q] -> {P, Q}; [P] -> {P, <<>>} end,
            {Status, Type, Body, Extra} = route(Method, Path, Query),
            Head = Method =:= 'HEAD',
            reply(Sock, Status, Type, Body, Extra, Close, Head),
            case Close of
                true -> gen_tcp:close(Sock);
                false -> request(Sock)
            end;
        error -> bad_request(Sock)
    end.

wants_close({1, 0}, Conn) -> string:lowercase(Conn) =/= <<"keep-alive">>;
wants_close(_, Conn) -> string:lowercase(Conn) =:= <<"close">>.

%% A request body (a POST to a known path, say) is read and dropped so the next request parses.
skip_body(Sock, Len) ->
    case catch binary_to_integer(Len) of
        0 -> ok;
        N when is_integer(N), N > 0, N =< 1048576 ->
            inet:setopts(Sock, [{packet, raw}]),
            R = gen_tcp:recv(Sock, N, ?IDLE_MS),
            inet:setopts(Sock, [{packet, http_bin}]),
            case R of {ok, _} -> ok; _ -> error end;
        _ -> error
    end.

-define(ROUTES, [<<"/plaintext">>, <<"/plaintext200">>, <<"/json">>, <<"/api/users">>, <<"/io">>,
                 <<"/cpu">>, <<"/mixed">>, <<"/health">>]).

route(Method, Path, Query) ->
    Known = lists:member(Path, ?ROUTES),
    if
        not Known -> err(404, <<"not found">>);
        Method =/= 'GET', Method =/= 'HEAD' ->
            {405, json, json:encode(#{error => <<"method not allowed">>}), [{<<"Allow">>, <<"GET">>}]};
        true -> handle(Path, Query)
    end.

err(Status, Msg) -> {Status, json, iolist_to_binary(json:encode(#{error => Msg})), []}.
ok_json(Term) -> {200, json, iolist_to_binary(json:encode(Term)), []}.

handle(<<"/plaintext">>, _) -> {200, text, <<"Hello, World!">>, []};
handle(<<"/plaintext200">>, _) -> {200, text, binary:copy(<<"0123456789">>, 20), []};
handle(<<"/json">>, _) -> ok_json(#{message => <<"Hello, World!">>});
handle(<<"/api/users">>, _) -> {200, json, users(), []};
handle(<<"/health">>, _) -> ok_json(health());
handle(<<"/io">>, Q) ->
    case int_param(Q, <<"ms">>, 10000) of
        {ok, Ms} -> sleep(Ms), ok_json(#{io_ms => Ms});
        {error, M} -> err(400, M)
    end;
handle(<<"/cpu">>, Q) ->
    case int_param(Q, <<"n">>, 10000000) of
        {ok, N} -> {200, json, cpu_body(N, []), []};
        {error, M} -> err(400, M)
    end;
handle(<<"/mixed">>, Q) ->
    case {int_param(Q, <<"cpu">>, 10000000), int_param(Q, <<"io">>, 10000)} of
        {{error, M}, _} -> err(400, M);
        {_, {error, M}} -> err(400, M);
        {{ok, N}, {ok, Ms}} ->
            H = hash(N),
            sleep(Ms),
            {200, json, cpu_body(N, H, Ms), []}
    end.

%% The process's own timer: only this connection's process waits; the schedulers run others.
sleep(Ms) -> receive after Ms -> ok end.

%% Key order matters (the contract's bodies), so these are built as iolists; JSON strings are encoded.
cpu_body(N, []) -> iolist_to_binary([<<"{\"n\":">>, integer_to_binary(N), <<",\"hash\":\"">>,
                                     integer_to_binary(hash(N)), <<"\"}">>]).
cpu_body(N, H, Ms) -> iolist_to_binary([<<"{\"n\":">>, integer_to_binary(N), <<",\"hash\":\"">>,
                                        integer_to_binary(H), <<"\",\"io_ms\":">>, integer_to_binary(Ms), <<"}">>]).

%% The 64-bit state as two 32-bit halves: every intermediate stays below 2^60, a small integer, where a masked
%% 64-bit integer becomes a heap bignum each round (measured, /cpu?n=100000, 4 connections, one core: 267 req/s
%% with halves, 25 req/s with the masked bignum).
-define(M32, 16#FFFFFFFF).
hash(N) -> hash(0, N, 16#cbf29ce4, 16#84222325).
hash(I, N, Hi, Lo) when I >= N -> (Hi bsl 32) bor Lo;
hash(I, N, Hi0, Lo0) ->
    Lo1 = Lo0 bxor I,                                   % I < 2^32 (N is at most 10^7): its high half is zero
    Hi2 = Hi0 bxor (((Hi0 bsl 13) bor (Lo1 bsr 19)) band ?M32),
    Lo2 = Lo1 bxor ((Lo1 bsl 13) band ?M32),
    Hi3 = Hi2 bxor (Hi2 bsr 7),                         % logical shift right by 7 across the halves
    Lo3 = Lo2 bxor ((Lo2 bsr 7) bor ((Hi2 bsl 25) band ?M32)),
    Hi4 = Hi3 bxor (((Hi3 bsl 17) bor (Lo3 bsr 15)) band ?M32),
    Lo4 = Lo3 bxor ((Lo3 bsl 17) band ?M32),
    hash(I + 1, N, Hi4, Lo4).

users() ->
    Us = [{1, <<"Ada Lovelace">>, <<"ada.lovelace@example.com">>, 36, true},
          {2, <<"Alan Turing">>, <<"alan.turing@example.com">>, 41, true},
          {3, <<"Grace Hopper">>, <<"grace.hopper@example.com">>, 85, false},
          {4, <<"Edsger Dijkstra">>, <<"edsger.dijkstra@example.com">>, 72, true},
          {5, <<"Barbara Liskov">>, <<"barbara.liskov@example.com">>, 86, true},
          {6, <<"Donald Knuth">>, <<"donald.knuth@example.com">>, 88, false},
          {7, <<"Margaret Hamilton">>, <<"margaret.hamilton@example.com">>, 90, true},
          {8, <<"Ken Thompson">>, <<"ken.thompson@example.com">>, 83, true},
          {9, <<"Frances Allen">>, <<"frances.allen@example.com">>, 88, false},
          {10, <<"Dennis Ritchie">>, <<"dennis.ritchie@example.com">>, 70, true}],
    Objs = [[<<"{\"id\":">>, integer_to_binary(Id), <<",\"name\":">>, json:encode(Name),
             <<",\"email\":">>, json:encode(Email), <<",\"age\":">>, integer_to_binary(Age),
             <<",\"active\":">>, atom_to_binary(Active), <<"}">>]
            || {Id, Name, Email, Age, Active} <- Us],
    iolist_to_binary([<<"[">>, lists:join(<<",">>, Objs), <<"]">>]).

health() ->
    #{server => ?NAME, runtime => <<"erlang">>,
      runtime_version => iolist_to_binary([erlang:system_info(otp_release), <<" erts ">>, erlang:system_info(version)]),
      model => <<"process-per-connection">>,
      settings => #{<<"ERL_SCHEDULERS">> => erlang:system_info(schedulers_online)}, contract => 1}.

%% First occurrence counts; "required" before "integer" before "bound".
int_param(Query, Name, Max) ->
    V = first(binary:split(Query, <<"&">>, [global]), Name),
    MaxB = integer_to_binary(Max),
    Digits = V =/= <<>> andalso lists:all(fun(C) -> C >= $0 andalso C =< $9 end, binary_to_list(V)),
    if
        V =:= <<>> -> {error, <<"parameter ", Name/binary, " is required">>};
        not Digits -> {error, <<"parameter ", Name/binary, " must be a non-negative integer">>};
        true ->
            Trim = case string:trim(V, leading, "0") of <<>> -> <<"0">>; T -> T end,
            case byte_size(Trim) > byte_size(MaxB) orelse binary_to_integer(Trim) > Max of
                true -> {error, <<"parameter ", Name/binary, " must be at most ", MaxB/binary>>};
                false -> {ok, binary_to_integer(Trim)}
            end
    end.

first([], _) -> <<>>;
first([Pair | Rest], Name) ->
    {K, V} = case binary:split(Pair, <<"=">>) of [A, B] -> {A, B}; [A] -> {A, <<>>} end,
    case decode(K) of Name -> decode(V); _ -> first(Rest, Name) end.

%% Ordinary URL decoding; a malformed escape keeps the value literally.
decode(Bin) ->
    Plus = binary:replace(Bin, <<"+">>, <<" ">>, [global]),
    case uri_string:percent_decode(Plus) of
        B when is_binary(B) -> B;
        _ -> Plus
    end.

reply(Sock, Status, Type, Body, Extra, Close, Head) ->
    Ct = case Type of text -> <<"text/plain">>; json -> <<"application/json">> end,
    B = iolist_to_binary(Body),
    Conn = case Close of true -> <<"Connection: close\r\n">>; false -> <<>> end,
    gen_tcp:send(Sock, [<<"HTTP/1.1 ">>, status_line(Status), <<"\r\nServer: erlang-otp\r\nDate: ">>, http_date(),
                        <<"\r\nContent-Type: ">>, Ct, <<"\r\nContent-Length: ">>, integer_to_binary(byte_size(B)),
                        <<"\r\n">>, [[K, <<": ">>, V, <<"\r\n">>] || {K, V} <- Extra], Conn, <<"\r\n">>,
                        case Head of true -> <<>>; false -> B end]).

status_line(200) -> <<"200 OK">>;
status_line(400) -> <<"400 Bad Request">>;
status_line(404) -> <<"404 Not Found">>;
status_line(405) -> <<"405 Method Not Allowed">>.

%% RFC 9110 IMF-fixdate from the UTC clock, per response (live, never cached).
http_date() ->
    {{Y, Mo, D}, {H, Mi, S}} = calendar:universal_time(),
    Day = element(calendar:day_of_the_week(Y, Mo, D), {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}),
    Mon = element(Mo, {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}),
    iolist_to_binary(io_lib:format("~s, ~2..0b ~s ~4b ~2..0b:~2..0b:~2..0b GMT", [Day, D, Mon, Y, H, Mi, S])).
