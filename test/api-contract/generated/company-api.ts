/**
 * Made by openapi-typescript from GET /api/openapi.json: do not edit. test/api-contract/generic-client.test.ts
 * makes it again and compares (UPDATE_OPENAPI_TYPES=1 to write it anew).
 */
export interface paths {
    "/api/company.php?a=request": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Ask a customer for access
         * @description Creates an access request. Show its `url` to the customer as a QR code; they claim it, choose the barrier and objects, and grant a key, or decline; `status` then shows which.
         */
        post: operations["request"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/company.php?a=status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Read a request's state
         * @description The state of one of your requests, and once access is granted, the key and the objects it opens. Read-only: it may be called as often as needed.
         */
        post: operations["status"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/company.php?a=open": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Open an object now
         * @description Checks the key, writes the customer's journal entry, sends the signed command to the barrier's controller and answers once the controller confirmed, within 8 seconds. Nothing is queued: a gate never opens later.
         */
        post: operations["open"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/company.php?a=trigger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a sample event
         * @description Writes a sample event of the kind you name to your outbox, delivered to your callback address and every `listen` of yours like any event: a way to try your receiver without a customer.
         */
        post: operations["trigger"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/company.php?a=listen": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Stream your events
         * @description Answers a `text/event-stream` that carries each event of yours written from now on, as the very delivery your callback address gets (headers and body, signed), until you close it; `gatelink-company listen --forward-to` forwards each to a local address. At most 4 at once per company.
         */
        post: operations["listen"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/company.php?a=sandbox": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Move your sandbox's customer and barrier
         * @description With `"sandbox": true` only: the simulated customer of your sandbox grants a request or withdraws a key, or its barrier is set to answer the next openings as chosen (opened, offline, busy, or the gate not moving). Any call with `"sandbox": true` reaches your sandbox alone; see cloud/README.md, "The sandbox".
         */
        post: operations["sandbox"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "request.claimed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The customer opened your link: the request is `claimed`.
         * @description The `request.claimed` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_request_claimed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "request.issued": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The customer granted access: the key and the objects it opens.
         * @description The `request.issued` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_request_issued"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "request.revoked": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The customer withdrew access (or paired the barrier to someone else).
         * @description The `request.revoked` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_request_revoked"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "request.expired": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The request lapsed before access was granted.
         * @description The `request.expired` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_request_expired"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "request.declined": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The customer declined the request: it ends here, and nothing is said of them or their barriers.
         * @description The `request.declined` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_request_declined"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "request.released": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The customer who claimed the request let it go, having opened it with the wrong account: it is `new` again, without `claimed_at`, and another account may claim it.
         * @description The `request.released` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_request_released"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "key.expired": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The end the customer set to the access has passed; the request keeps its state.
         * @description The `key.expired` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_key_expired"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "open.succeeded": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An `open` call opened the barrier.
         * @description The `open.succeeded` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_open_succeeded"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "open.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An `open` call with one of your keys did not open it: the journal entry's `outcome` says why.
         * @description The `open.failed` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_open_failed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "open.gate_opened": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The gate of one of your openings was seen open after the relay fired (controllers with a position sensor).
         * @description The `open.gate_opened` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_open_gate_opened"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "open.gate_closed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The gate your opening opened was seen closed again.
         * @description The `open.gate_closed` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_open_gate_closed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "open.gate_not_moved": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The relay fired, but the gate was not seen moving within the barrier's limit.
         * @description The `open.gate_not_moved` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_open_gate_not_moved"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "gate.left_open": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The gate your opening opened has stayed open past the customer's limit for that barrier.
         * @description The `gate.left_open` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_gate_left_open"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "gate.closed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The gate of a `gate.left_open` closed at last.
         * @description The `gate.closed` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_gate_closed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    ping: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A test event: a member pressed **Send a test event** in the company area.
         * @description The `ping` event, POSTed to your callback address. Answer with any 2xx status within 10 s: that is a delivery. Anything else (another status, a redirect, no answer) is tried again later, with the same body and a fresh `webhook-timestamp` and signature (cloud/README.md, "Delivery"). Events come in the order they happened, at least once; kinds and fields may be added, so accept what you do not know.
         */
        post: operations["event_ping"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * @description A new access request. Every field is optional; an empty object asks with the defaults.
         * @example {
         *       "ref": "ORD-1042",
         *       "ttl_hours": 48
         *     }
         * @example {
         *       "ref": "CLEAN-7",
         *       "shape": {
         *         "windows": [
         *           {
         *             "days": [
         *               "mon",
         *               "tue",
         *               "wed",
         *               "thu",
         *               "fri"
         *             ],
         *             "from": "08:00",
         *             "to": "12:00"
         *           }
         *         ],
         *         "starts_at": "2026-12-07 07:00:00",
         *         "ends_at": "2026-12-19 17:00:00"
         *       }
         *     }
         * @example {}
         */
        RequestBody: {
            /**
             * @description true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the sandbox secret (`glsb_`) goes with it.
             * @example true
             * @constant
             */
            sandbox?: true;
            /**
             * @description Your own reference, shown to the customer beside your name: 1..64 printable characters (no control, separator or invisible characters; cloud/README.md, "Printable text"). Not unique.
             * @example ORD-1042
             */
            ref?: string;
            /**
             * @description How long the customer may take to grant access, in hours: 1..720, 24 when left out.
             * @default 24
             * @example 48
             */
            ttl_hours: number;
            /**
             * @description The access you ask for (docs/design.md section 3.1): hours of the week, a start, an end, a number of openings. The customer sees it and may grant it or less; `status` shows what was granted. Left out: the customer chooses.
             * @example {
             *       "windows": [
             *         {
             *           "days": [
             *             "mon",
             *             "tue",
             *             "wed",
             *             "thu",
             *             "fri"
             *           ],
             *           "from": "08:00",
             *           "to": "12:00"
             *         }
             *       ],
             *       "starts_at": "2026-12-07 07:00:00",
             *       "ends_at": "2026-12-19 17:00:00",
             *       "openings": 5
             *     }
             * @example {
             *       "windows": [
             *         {
             *           "days": [
             *             "fri"
             *           ],
             *           "from": "22:00",
             *           "to": "06:00"
             *         }
             *       ]
             *     }
             */
            shape?: {
                /**
                 * @description When in the week the key opens: 1..8 windows, any of which allows. Left out: at any hour.
                 * @example [
                 *       {
                 *         "days": [
                 *           "mon",
                 *           "tue",
                 *           "wed",
                 *           "thu",
                 *           "fri"
                 *         ],
                 *         "from": "08:00",
                 *         "to": "12:00"
                 *       }
                 *     ]
                 */
                windows?: {
                    /**
                     * @description The weekdays the window starts on: 1..7 of mon, tue, wed, thu, fri, sat, sun, each at most once.
                     * @example [
                     *       "mon",
                     *       "tue",
                     *       "wed",
                     *       "thu",
                     *       "fri"
                     *     ]
                     */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /**
                     * @description When the window opens, `HH:MM` from 00:00 to 23:59, wall-clock time in the barrier's time zone.
                     * @example 08:00
                     */
                    from: string;
                    /**
                     * @description When the window closes, `HH:MM` from 00:01 to 24:00, wall-clock time in the barrier's time zone; the window closes as that minute begins. Earlier than `from`: the window crosses midnight and ends on the next day.
                     * @example 12:00
                     */
                    to: string;
                }[];
                /**
                 * @description The first moment the key opens; left out: from the grant on, `YYYY-MM-DD HH:MM:SS` in UTC.
                 * @example 2026-12-07 07:00:00
                 */
                starts_at?: string;
                /**
                 * @description The moment the key stops opening; left out: until the customer withdraws it, `YYYY-MM-DD HH:MM:SS` in UTC.
                 * @example 2026-12-19 17:00:00
                 */
                ends_at?: string;
                /**
                 * @description How many openings the key makes in all, 1..1000. Left out: no count.
                 * @example 5
                 */
                openings?: number;
            };
        } & {
            [key: string]: unknown;
        };
        /**
         * @description The new request.
         * @example {
         *       "code": "7KQ2M9XG4TPW",
         *       "url": "https://gatelink.example/c/7KQ2M9XG4TPW",
         *       "expires_in_hours": 48,
         *       "expires_at": "2026-12-03 09:30:00"
         *     }
         */
        RequestAnswer: {
            /**
             * @description Present, and true, on every answer of your sandbox; never on a live one.
             * @constant
             */
            sandbox?: true;
            /**
             * @description The request code, for `status`.
             * @example 7KQ2M9XG4TPW
             */
            code: string;
            /**
             * @description Where the customer grants access, `{base_url}/c/<code>`: show it as a QR code.
             * @example https://gatelink.example/c/7KQ2M9XG4TPW
             */
            url: string;
            /**
             * @description The request's lifetime in hours.
             * @example 48
             */
            expires_in_hours: number;
            /** @description When the request expires if not granted, `YYYY-MM-DD HH:MM:SS` in UTC. */
            expires_at: string;
        };
        /**
         * @description Which request to read.
         * @example {
         *       "code": "7KQ2M9XG4TPW"
         *     }
         */
        StatusBody: {
            /**
             * @description true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the sandbox secret (`glsb_`) goes with it.
             * @example true
             * @constant
             */
            sandbox?: true;
            /**
             * @description The code `request` answered: 12 characters of Crockford base32, accepted in any case. Another company's code answers 404 not_found, like an unknown one.
             * @example 7KQ2M9XG4TPW
             */
            code: string;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description The request as it stands. A field appears once it has a value.
         * @example {
         *       "code": "7KQ2M9XG4TPW",
         *       "state": "issued",
         *       "expires_at": "2026-12-03 09:30:00",
         *       "ref": "ORD-1042",
         *       "claimed_at": "2026-12-01 10:02:11",
         *       "key_ref": 311,
         *       "issued_at": "2026-12-01 10:03:40",
         *       "numbers": [
         *         {
         *           "number_id": 17,
         *           "label": "Main gate"
         *         }
         *       ]
         *     }
         * @example {
         *       "code": "7KQ2M9XG4TPW",
         *       "state": "new",
         *       "expires_at": "2026-12-03 09:30:00"
         *     }
         */
        StatusAnswer: {
            /**
             * @description Present, and true, on every answer of your sandbox; never on a live one.
             * @constant
             */
            sandbox?: true;
            /** @description The request code, in upper case. */
            code: string;
            /**
             * @description new → claimed → issued → revoked; new or claimed → expired when the request ends before access is granted; claimed → declined when the customer says no. expired and declined are final.
             * @enum {string}
             */
            state: "new" | "claimed" | "issued" | "revoked" | "expired" | "declined";
            /** @description The request's end, `YYYY-MM-DD HH:MM:SS` in UTC. */
            expires_at: string;
            /** @description Your `ref`, when given at creation. */
            ref?: string;
            /** @description When a customer claimed the request, `YYYY-MM-DD HH:MM:SS` in UTC. */
            claimed_at?: string;
            /** @description The granted key, for `open`; from issuing. */
            key_ref?: number;
            /** @description When the customer granted access, `YYYY-MM-DD HH:MM:SS` in UTC. */
            issued_at?: string;
            /** @description The objects the key may open; from issuing. */
            numbers?: {
                /** @description The object, for `open`. */
                number_id: number;
                /** @description The customer's name for it. */
                label: string;
                /**
                 * @description Present when the gate opens on a call from the customer's own phone: `open` answers `opened` once the phone placed the call (the gate opens on it), not when anyone saw the gate move. While the phone is offline, the customer may be asked to call the gate themselves: `open` then waits up to 60 s and answers `opened` once they tapped "Call the gate".
                 * @constant
                 */
                phone_call?: true;
            }[];
            /** @description The key's end, when the customer set one, `YYYY-MM-DD HH:MM:SS` in UTC. */
            key_expires_at?: string;
            /** @description When the customer withdrew access, `YYYY-MM-DD HH:MM:SS` in UTC. */
            revoked_at?: string;
            /**
             * @description The shape the customer granted, once issued and when they set one: `windows` in the barrier's `time_zone`, `starts_at`, `ends_at` (the same moment as `key_expires_at`), `openings` in all.
             * @example {
             *       "windows": [
             *         {
             *           "days": [
             *             "mon",
             *             "tue",
             *             "wed",
             *             "thu",
             *             "fri"
             *           ],
             *           "from": "08:00",
             *           "to": "12:00"
             *         }
             *       ],
             *       "starts_at": "2026-12-07 07:00:00",
             *       "ends_at": "2026-12-19 17:00:00",
             *       "openings": 5
             *     }
             * @example {
             *       "windows": [
             *         {
             *           "days": [
             *             "fri"
             *           ],
             *           "from": "22:00",
             *           "to": "06:00"
             *         }
             *       ]
             *     }
             */
            shape?: {
                /**
                 * @description When in the week the key opens: 1..8 windows, any of which allows. Left out: at any hour.
                 * @example [
                 *       {
                 *         "days": [
                 *           "mon",
                 *           "tue",
                 *           "wed",
                 *           "thu",
                 *           "fri"
                 *         ],
                 *         "from": "08:00",
                 *         "to": "12:00"
                 *       }
                 *     ]
                 */
                windows?: {
                    /**
                     * @description The weekdays the window starts on: 1..7 of mon, tue, wed, thu, fri, sat, sun, each at most once.
                     * @example [
                     *       "mon",
                     *       "tue",
                     *       "wed",
                     *       "thu",
                     *       "fri"
                     *     ]
                     */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /**
                     * @description When the window opens, `HH:MM` from 00:00 to 23:59, wall-clock time in the barrier's time zone.
                     * @example 08:00
                     */
                    from: string;
                    /**
                     * @description When the window closes, `HH:MM` from 00:01 to 24:00, wall-clock time in the barrier's time zone; the window closes as that minute begins. Earlier than `from`: the window crosses midnight and ends on the next day.
                     * @example 12:00
                     */
                    to: string;
                }[];
                /**
                 * @description The first moment the key opens; left out: from the grant on, `YYYY-MM-DD HH:MM:SS` in UTC.
                 * @example 2026-12-07 07:00:00
                 */
                starts_at?: string;
                /**
                 * @description The moment the key stops opening; left out: until the customer withdraws it, `YYYY-MM-DD HH:MM:SS` in UTC.
                 * @example 2026-12-19 17:00:00
                 */
                ends_at?: string;
                /**
                 * @description How many openings the key makes in all, 1..1000. Left out: no count.
                 * @example 5
                 */
                openings?: number;
            };
            /**
             * @description The barrier's IANA time zone, in which `shape.windows` are read; from issuing.
             * @example Europe/Berlin
             */
            time_zone?: string;
            /** @description Openings made so far, when `shape.openings` limits them (under way and unanswered ones count). */
            openings_used?: number;
            /** @description Present when the customer asks to approve each opening: `open` then waits up to this many seconds for their answer before it sends the command, and answers 403 `denied` or `not_answered` without one. */
            ask_first_s?: number;
            /** @description When the customer declined the request, `YYYY-MM-DD HH:MM:SS` in UTC. */
            declined_at?: string;
        };
        /**
         * @description Open one object of a key, now. Answered once the controller confirmed the opening, within 8 s. On a key whose customer approves each opening (`ask_first_s` in `status`), the call first waits up to that many seconds (at most 120) for their answer: 403 `denied` or `not_answered` without an Allow, so allow such a call up to 128 s before you give up on it.
         * @example {
         *       "key_ref": 311,
         *       "number_id": 17,
         *       "actor": "Anna, shift B"
         *     }
         */
        OpenBody: {
            /**
             * @description true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the sandbox secret (`glsb_`) goes with it.
             * @example true
             * @constant
             */
            sandbox?: true;
            /**
             * @description The key the customer granted: `key_ref` of `status`.
             * @example 311
             */
            key_ref: number;
            /**
             * @description The object to open: a `number_id` of the key's `numbers`.
             * @example 17
             */
            number_id: number;
            /**
             * @description The employee who opens, as the customer reads it in the journal. Trimmed of white space first; then 1..128 printable characters. Missing or empty answers 400 actor_required.
             * @example Anna, shift B
             */
            actor: string;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description The controller confirmed the opening.
         * @example {
         *       "ok": 1,
         *       "id": 90412
         *     }
         */
        OpenAnswer: {
            /**
             * @description Present, and true, on every answer of your sandbox; never on a live one.
             * @constant
             */
            sandbox?: true;
            /** @constant */
            ok: 1;
            /** @description The opening's entry in the customer's journal. */
            id: number;
        };
        /**
         * @description Send a sample event: the example of its kind, with a new `id` and `at`, written to your outbox as any event is, so it reaches your callback address and every `listen` of yours. Its data names no real request, key or barrier.
         * @example {
         *       "type": "open.succeeded"
         *     }
         */
        TriggerBody: {
            /**
             * @description true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the sandbox secret (`glsb_`) goes with it.
             * @example true
             * @constant
             */
            sandbox?: true;
            /**
             * @description The kind of event to send: its example in cloud/README.md, with a new `id` and the time now.
             * @example open.succeeded
             * @enum {string}
             */
            type: "request.claimed" | "request.issued" | "request.revoked" | "request.expired" | "request.declined" | "request.released" | "key.expired" | "open.succeeded" | "open.failed" | "open.gate_opened" | "open.gate_closed" | "open.gate_not_moved" | "gate.left_open" | "gate.closed" | "ping";
        } & {
            [key: string]: unknown;
        };
        /**
         * @description The sample event was written; it is delivered as any event is.
         * @example {
         *       "id": "5b0e3c9a-7d21-4f6e-9a8b-2c4d6e8f0a1b",
         *       "type": "open.succeeded"
         *     }
         */
        TriggerAnswer: {
            /**
             * @description Present, and true, on every answer of your sandbox; never on a live one.
             * @constant
             */
            sandbox?: true;
            /** @description The sample event's `id`, as its delivery carries it. */
            id: string;
            /** @enum {string} */
            type: "request.claimed" | "request.issued" | "request.revoked" | "request.expired" | "request.declined" | "request.released" | "key.expired" | "open.succeeded" | "open.failed" | "open.gate_opened" | "open.gate_closed" | "open.gate_not_moved" | "gate.left_open" | "gate.closed" | "ping";
        };
        /**
         * @description Stream your events as they are written (your sandbox's with `"sandbox": true`), until you close the connection. Nothing but the credentials: an empty object in signature mode.
         * @example {}
         */
        ListenBody: {
            /**
             * @description true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the sandbox secret (`glsb_`) goes with it.
             * @example true
             * @constant
             */
            sandbox?: true;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description A `text/event-stream`: each event a Server-Sent Event named after its kind, its `data` this JSON; a comment line every 25 s keeps the connection open through proxies.
         * @example {
         *       "headers": {
         *         "webhook-id": "5b0e3c9a-7d21-4f6e-9a8b-2c4d6e8f0a1b",
         *         "webhook-timestamp": "1777889702",
         *         "webhook-signature": "v1,Q3VyaW91cyBhcmUgd2U/IFNpZ25lZCwgdG9vLg== v1a,U2lnbmVkIGJ5IHRoZSBzZXJ2aWNlIGtleS4="
         *       },
         *       "body": "{\"type\":\"ping\",\"id\":\"5b0e3c9a-7d21-4f6e-9a8b-2c4d6e8f0a1b\",\"at\":\"2026-05-04 10:15:02\",\"data\":{\"message\":\"A test event.\"}}"
         *     }
         */
        ListenMessage: {
            headers: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            /** @description The body exactly as a delivery sends it: `{"type", "id", "at", "data"}`. */
            body: string;
        };
        /**
         * @description Move your sandbox's simulated customer and barrier (only with `"sandbox": true`): `grant` claims and grants a request as a customer would, `withdraw` withdraws a key, `outcome` sets what the next openings come to. Each makes the events a real move makes.
         * @example {
         *       "sandbox": true,
         *       "do": "grant",
         *       "code": "7KQ2M9XG4TPW"
         *     }
         * @example {
         *       "sandbox": true,
         *       "do": "withdraw",
         *       "key_ref": 311
         *     }
         * @example {
         *       "sandbox": true,
         *       "do": "outcome",
         *       "outcome": "gate_not_moved"
         *     }
         */
        SandboxBody: ({
            /**
             * @description true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the sandbox secret (`glsb_`) goes with it.
             * @example true
             * @constant
             */
            sandbox?: true;
            /** @constant */
            do: "grant";
            /**
             * @description The code `request` answered in the sandbox.
             * @example 7KQ2M9XG4TPW
             */
            code: string;
            /**
             * @description The access the simulated customer grants; left out: what the request asked for.
             * @example {
             *       "windows": [
             *         {
             *           "days": [
             *             "mon",
             *             "tue",
             *             "wed",
             *             "thu",
             *             "fri"
             *           ],
             *           "from": "08:00",
             *           "to": "12:00"
             *         }
             *       ],
             *       "starts_at": "2026-12-07 07:00:00",
             *       "ends_at": "2026-12-19 17:00:00",
             *       "openings": 5
             *     }
             * @example {
             *       "windows": [
             *         {
             *           "days": [
             *             "fri"
             *           ],
             *           "from": "22:00",
             *           "to": "06:00"
             *         }
             *       ]
             *     }
             */
            shape?: {
                /**
                 * @description When in the week the key opens: 1..8 windows, any of which allows. Left out: at any hour.
                 * @example [
                 *       {
                 *         "days": [
                 *           "mon",
                 *           "tue",
                 *           "wed",
                 *           "thu",
                 *           "fri"
                 *         ],
                 *         "from": "08:00",
                 *         "to": "12:00"
                 *       }
                 *     ]
                 */
                windows?: {
                    /**
                     * @description The weekdays the window starts on: 1..7 of mon, tue, wed, thu, fri, sat, sun, each at most once.
                     * @example [
                     *       "mon",
                     *       "tue",
                     *       "wed",
                     *       "thu",
                     *       "fri"
                     *     ]
                     */
                    days: ("mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun")[];
                    /**
                     * @description When the window opens, `HH:MM` from 00:00 to 23:59, wall-clock time in the barrier's time zone.
                     * @example 08:00
                     */
                    from: string;
                    /**
                     * @description When the window closes, `HH:MM` from 00:01 to 24:00, wall-clock time in the barrier's time zone; the window closes as that minute begins. Earlier than `from`: the window crosses midnight and ends on the next day.
                     * @example 12:00
                     */
                    to: string;
                }[];
                /**
                 * @description The first moment the key opens; left out: from the grant on, `YYYY-MM-DD HH:MM:SS` in UTC.
                 * @example 2026-12-07 07:00:00
                 */
                starts_at?: string;
                /**
                 * @description The moment the key stops opening; left out: until the customer withdraws it, `YYYY-MM-DD HH:MM:SS` in UTC.
                 * @example 2026-12-19 17:00:00
                 */
                ends_at?: string;
                /**
                 * @description How many openings the key makes in all, 1..1000. Left out: no count.
                 * @example 5
                 */
                openings?: number;
            };
        } & {
            [key: string]: unknown;
        }) | ({
            /**
             * @description true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the sandbox secret (`glsb_`) goes with it.
             * @example true
             * @constant
             */
            sandbox?: true;
            /** @constant */
            do: "withdraw";
            /**
             * @description The key to withdraw: `key_ref` of `status`.
             * @example 311
             */
            key_ref: number;
        } & {
            [key: string]: unknown;
        }) | ({
            /**
             * @description true: the call goes to your sandbox (cloud/README.md, "The sandbox"): a simulated customer and a barrier the cloud runs for you, apart from every real one. Left out: the live service. In secret mode the sandbox secret (`glsb_`) goes with it.
             * @example true
             * @constant
             */
            sandbox?: true;
            /** @constant */
            do: "outcome";
            /**
             * @description What the barrier does with the next openings: `opened` (the gate opens, then closes), `offline` (503 device_offline), `busy` (the controller refuses: 502 device_error), `gate_not_moved` (the relay fires and the gate never moves: `open.gate_not_moved` follows).
             * @example gate_not_moved
             * @enum {string}
             */
            outcome: "opened" | "offline" | "busy" | "gate_not_moved";
        } & {
            [key: string]: unknown;
        });
        /**
         * @description What the move left, as `status` will read it.
         * @example {
         *       "sandbox": true,
         *       "code": "7KQ2M9XG4TPW",
         *       "key_ref": 311
         *     }
         * @example {
         *       "sandbox": true,
         *       "key_ref": 311,
         *       "withdrawn": true
         *     }
         * @example {
         *       "sandbox": true,
         *       "outcome": "gate_not_moved"
         *     }
         */
        SandboxAnswer: {
            /**
             * @description Always: a move is the sandbox's.
             * @constant
             */
            sandbox: true;
            /** @description grant: the request granted. */
            code?: string;
            /** @description grant and withdraw: the key. */
            key_ref?: number;
            /**
             * @description withdraw: the key is withdrawn.
             * @constant
             */
            withdrawn?: true;
            /**
             * @description outcome: what the next openings come to.
             * @enum {string}
             */
            outcome?: "opened" | "offline" | "busy" | "gate_not_moved";
        };
        RequestClaimedEvent: {
            /** @constant */
            type: "request.claimed";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The customer opened your link: the request is `claimed`. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /**
                 * @description The request's state now.
                 * @enum {string}
                 */
                state: "new" | "claimed" | "issued" | "revoked" | "expired" | "declined";
                /** @description When the customer claimed the request, `YYYY-MM-DD HH:MM:SS` in UTC. */
                claimed_at: string;
            };
        };
        RequestIssuedEvent: {
            /** @constant */
            type: "request.issued";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The customer granted access: the key and the objects it opens. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /**
                 * @description The request's state now.
                 * @enum {string}
                 */
                state: "new" | "claimed" | "issued" | "revoked" | "expired" | "declined";
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description When the customer granted access, `YYYY-MM-DD HH:MM:SS` in UTC. */
                issued_at: string;
                /** @description The objects the key may open. */
                numbers: {
                    /** @description The object, for `open`. */
                    number_id: number;
                    /** @description The customer's name for it. */
                    label: string;
                    /**
                     * @description Present when the gate opens on a call from the customer's own phone: `open` answers `opened` once the phone placed the call (the gate opens on it), not when anyone saw the gate move. While the phone is offline, the customer may be asked to call the gate themselves: `open` then waits up to 60 s and answers `opened` once they tapped "Call the gate".
                     * @constant
                     */
                    phone_call?: true;
                }[];
                /** @description The key's end, only when the customer set one, `YYYY-MM-DD HH:MM:SS` in UTC. */
                key_expires_at?: string;
            };
        };
        RequestRevokedEvent: {
            /** @constant */
            type: "request.revoked";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The customer withdrew access (or paired the barrier to someone else). */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /**
                 * @description The request's state now.
                 * @enum {string}
                 */
                state: "new" | "claimed" | "issued" | "revoked" | "expired" | "declined";
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description When the customer withdrew access, `YYYY-MM-DD HH:MM:SS` in UTC. */
                revoked_at: string;
            };
        };
        RequestExpiredEvent: {
            /** @constant */
            type: "request.expired";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The request lapsed before access was granted. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @constant */
                state: "expired";
                /** @description When the request's lifetime ended, `YYYY-MM-DD HH:MM:SS` in UTC. */
                expired_at: string;
            };
        };
        RequestDeclinedEvent: {
            /** @constant */
            type: "request.declined";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The customer declined the request: it ends here, and nothing is said of them or their barriers. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @constant */
                state: "declined";
                /** @description When the customer declined, `YYYY-MM-DD HH:MM:SS` in UTC. */
                declined_at: string;
            };
        };
        RequestReleasedEvent: {
            /** @constant */
            type: "request.released";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The customer who claimed the request let it go, having opened it with the wrong account: it is `new` again, without `claimed_at`, and another account may claim it. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @constant */
                state: "new";
                /** @description When the customer let the request go, `YYYY-MM-DD HH:MM:SS` in UTC. */
                released_at: string;
            };
        };
        KeyExpiredEvent: {
            /** @constant */
            type: "key.expired";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The end the customer set to the access has passed; the request keeps its state. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /**
                 * @description The request's state now.
                 * @enum {string}
                 */
                state: "new" | "claimed" | "issued" | "revoked" | "expired" | "declined";
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description The end the customer set, `YYYY-MM-DD HH:MM:SS` in UTC. */
                key_expires_at: string;
            };
        };
        OpenSucceededEvent: {
            /** @constant */
            type: "open.succeeded";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description An `open` call opened the barrier. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description The object; null when the object named is not in the key (`forbidden`). */
                number_id: number | null;
                /** @description Who opened, as your `open` call named them. */
                actor: string;
                /** @description The journal entry: the `id` that `open` answered. */
                journal_id: number;
                /**
                 * @description The journal entry's outcome.
                 * @enum {string}
                 */
                outcome: "opened" | "device_offline" | "device_timeout" | "device_error" | "revoked" | "expired" | "rate_limit" | "forbidden" | "not_started" | "outside_hours" | "openings_used" | "denied" | "not_answered";
                /** @description Only when the entry has one: a device failure's reason, a late acknowledgement. */
                detail?: string;
            };
        };
        OpenFailedEvent: {
            /** @constant */
            type: "open.failed";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description An `open` call with one of your keys did not open it: the journal entry's `outcome` says why. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description The object; null when the object named is not in the key (`forbidden`). */
                number_id: number | null;
                /** @description Who opened, as your `open` call named them. */
                actor: string;
                /** @description The journal entry: the `id` that `open` answered. */
                journal_id: number;
                /**
                 * @description The journal entry's outcome.
                 * @enum {string}
                 */
                outcome: "opened" | "device_offline" | "device_timeout" | "device_error" | "revoked" | "expired" | "rate_limit" | "forbidden" | "not_started" | "outside_hours" | "openings_used" | "denied" | "not_answered";
                /** @description Only when the entry has one: a device failure's reason, a late acknowledgement. */
                detail?: string;
            };
        };
        OpenGateOpenedEvent: {
            /** @constant */
            type: "open.gate_opened";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The gate of one of your openings was seen open after the relay fired (controllers with a position sensor). */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description The object; null when the object named is not in the key (`forbidden`). */
                number_id: number | null;
                /** @description Who opened, as your `open` call named them. */
                actor: string;
                /** @description The journal entry: the `id` that `open` answered. */
                journal_id: number;
                /** @description When the relay fired (the acknowledgement), ISO 8601 with milliseconds, UTC. */
                relay_at: string;
                /** @description When the gate was seen open, ISO 8601 with milliseconds, UTC. */
                opened_at: string;
            };
        };
        OpenGateClosedEvent: {
            /** @constant */
            type: "open.gate_closed";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The gate your opening opened was seen closed again. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description The object; null when the object named is not in the key (`forbidden`). */
                number_id: number | null;
                /** @description Who opened, as your `open` call named them. */
                actor: string;
                /** @description The journal entry: the `id` that `open` answered. */
                journal_id: number;
                /** @description When the relay fired (the acknowledgement), ISO 8601 with milliseconds, UTC. */
                relay_at: string;
                /** @description When the gate was seen open, ISO 8601 with milliseconds, UTC. */
                opened_at: string;
                /** @description When the gate was seen closed, ISO 8601 with milliseconds, UTC. */
                closed_at: string;
                /** @description How long the gate stood open, in seconds, to a tenth. */
                open_for_s: number;
            };
        };
        OpenGateNotMovedEvent: {
            /** @constant */
            type: "open.gate_not_moved";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The relay fired, but the gate was not seen moving within the barrier's limit. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description The object; null when the object named is not in the key (`forbidden`). */
                number_id: number | null;
                /** @description Who opened, as your `open` call named them. */
                actor: string;
                /** @description The journal entry: the `id` that `open` answered. */
                journal_id: number;
                /** @description When the relay fired (the acknowledgement), ISO 8601 with milliseconds, UTC. */
                relay_at: string;
                /** @description When the limit passed without the gate moving, ISO 8601 with milliseconds, UTC. */
                not_moved_at: string;
                /** @description The barrier's limit for the gate to move, in seconds. */
                limit_s: number;
            };
        };
        GateLeftOpenEvent: {
            /** @constant */
            type: "gate.left_open";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The gate your opening opened has stayed open past the customer's limit for that barrier. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description The object; null when the object named is not in the key (`forbidden`). */
                number_id: number | null;
                /** @description Who opened, as your `open` call named them. */
                actor: string;
                /** @description The journal entry: the `id` that `open` answered. */
                journal_id: number;
                /** @description When the gate was seen open, ISO 8601 with milliseconds, UTC. */
                opened_at: string;
                /** @description When the gate was found open past the limit, ISO 8601 with milliseconds, UTC. */
                left_open_at: string;
                /** @description The customer's limit for the gate to stand open, in seconds. */
                limit_s: number;
            };
        };
        GateClosedEvent: {
            /** @constant */
            type: "gate.closed";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description The gate of a `gate.left_open` closed at last. */
            data: {
                /** @description The request code. */
                code: string;
                /** @description Your `ref`, null when the request has none. */
                ref: string | null;
                /** @description The key, as `status` gives it and `open` takes it. */
                key_ref: number;
                /** @description The object; null when the object named is not in the key (`forbidden`). */
                number_id: number | null;
                /** @description Who opened, as your `open` call named them. */
                actor: string;
                /** @description The journal entry: the `id` that `open` answered. */
                journal_id: number;
                /** @description When the gate was seen open, ISO 8601 with milliseconds, UTC. */
                opened_at: string;
                /** @description When the gate was found open past the limit, ISO 8601 with milliseconds, UTC. */
                left_open_at: string;
                /** @description When the gate was seen closed, ISO 8601 with milliseconds, UTC. */
                closed_at: string;
                /** @description How long the gate stood open, in seconds, to a tenth. */
                open_for_s: number;
            };
        };
        PingEvent: {
            /** @constant */
            type: "ping";
            /** @description Unique per event: drop a repeat by it (delivery is at least once). */
            id: string;
            /** @description When it happened, `YYYY-MM-DD HH:MM:SS` in UTC. */
            at: string;
            /** @description A test event: a member pressed **Send a test event** in the company area. */
            data: {
                /** @description A sentence saying what the event is. */
                message: string;
            };
        };
        /** @description Secret mode: send `org_id` and `secret` in the body, both or neither. A company with a domain signs instead (403 secret_disabled). */
        SecretCredentials: {
            /**
             * @description Your company's id (secret mode; optional in signature mode).
             * @example 42
             */
            org_id?: number;
            /**
             * @description Your secret, `glsk_` and 43 base64url characters (secret mode only).
             * @example glsk_Ex4mpleSecretEx4mpleSecretEx4mpleSecret00
             */
            secret?: string;
        };
        /** @description A refusal. */
        Error: {
            /** @description The error code (cloud/README.md, "Errors"). */
            error: string;
            /** @description One sentence saying what to do; may be more specific than the table. */
            message: string;
            /** @description The field at fault, for invalid_field. */
            field?: string;
            /** @description The controller's reason, for device_error. */
            detail?: string;
        };
    };
    responses: never;
    parameters: {
        /** @description For 24 hours the same key with the same body answers the first answer again instead of acting twice; with another body, 422 idempotency_conflict; while the first call runs, 409 idempotency_in_progress. A 429 rate_limit is not kept. Keys are per company and per action. */
        IdempotencyKey: string;
        /** @description The event's `id`: drop a repeat by it. */
        WebhookId: string;
        /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
        WebhookTimestamp: string;
        /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
        WebhookSignature: string;
    };
    requestBodies: never;
    headers: {
        /** @description Our id of the call, on every answer: quote it when you report a problem. */
        XRequestId: string;
        /** @description Seconds until the key may open again. */
        RetryAfter: number;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    request: {
        parameters: {
            query?: never;
            header?: {
                /** @description For 24 hours the same key with the same body answers the first answer again instead of acting twice; with another body, 422 idempotency_conflict; while the first call runs, 409 idempotency_in_progress. A 429 rate_limit is not kept. Keys are per company and per action. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description A JSON object of at most 16 KiB, sent with Content-Type: application/json. In secret mode it also carries `org_id` and `secret` (SecretCredentials). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RequestBody"] & components["schemas"]["SecretCredentials"];
            };
        };
        responses: {
            /** @description The new request. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RequestAnswer"];
                };
            };
            /**
             * @description `bad_json`: The body must be a JSON object.
             *
             *     `invalid_field`: A field has the wrong type or is out of range.
             *
             *     `bad_request`: The request is not well-formed HTTP/1.1: send a valid request line, headers without control characters, and a body framed by Content-Length or valid chunks.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "bad_json" | "invalid_field" | "bad_request";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `auth_required`: Sign the call with the X-Service-* headers, or send org_id and secret in the body.
             *
             *     `bad_headers`: Send all four X-Service-* headers, well formed (ASCII domain, Unix seconds, 32 hex nonce, base64).
             *
             *     `stale_timestamp`: X-Service-Ts is more than 300 seconds from our clock; sync your clock.
             *
             *     `nonce_reused`: This nonce was already used; send a fresh random nonce with every call.
             *
             *     `bad_signature`: The signature does not match the body and headers under your key.
             *
             *     `unknown_org`: No company is registered with this domain or org_id.
             *
             *     `bad_secret`: The secret is wrong.
             *
             *     `key_unavailable`: Your key file could not be fetched for 24 hours; publish it at /.well-known/service.json.
             *
             *     `key_changed`: Your key file holds a different key than the one confirmed; confirm the rotation in your account area.
             *
             *     `live_secret`: This is a live secret: a call with "sandbox": true takes your sandbox secret (glsb_).
             *
             *     `sandbox_secret`: This is a sandbox secret: send "sandbox": true with it, or use your live secret (glsk_).
             */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "auth_required" | "bad_headers" | "stale_timestamp" | "nonce_reused" | "bad_signature" | "unknown_org" | "bad_secret" | "key_unavailable" | "key_changed" | "live_secret" | "sandbox_secret";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `org_not_approved`: The company is not approved, or is suspended.
             *
             *     `secret_disabled`: This company has a domain: sign calls with its key instead of a secret.
             */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "org_not_approved" | "secret_disabled";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `request_timeout`: The request did not arrive in time; send the headers and body at once, then retry. */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_timeout";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `idempotency_in_progress`: A call with this Idempotency-Key is still being processed; retry in a moment. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "idempotency_in_progress";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `too_large`: The body is larger than 16 KiB. */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `unsupported_media_type`: Send the body with Content-Type: application/json. */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unsupported_media_type";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `idempotency_conflict`: This Idempotency-Key was already used with a different body; use a new key for a new call. */
            422: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "idempotency_conflict";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `headers_too_large`: The request line and headers are larger than 16 KiB; send fewer or shorter headers. */
            431: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "headers_too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `internal`: Something went wrong on our side; quote the X-Request-Id when you report it. */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "internal";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
        };
    };
    status: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description A JSON object of at most 16 KiB, sent with Content-Type: application/json. In secret mode it also carries `org_id` and `secret` (SecretCredentials). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["StatusBody"] & components["schemas"]["SecretCredentials"];
            };
        };
        responses: {
            /** @description The request as it stands. A field appears once it has a value. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StatusAnswer"];
                };
            };
            /**
             * @description `bad_json`: The body must be a JSON object.
             *
             *     `invalid_field`: A field has the wrong type or is out of range.
             *
             *     `bad_request`: The request is not well-formed HTTP/1.1: send a valid request line, headers without control characters, and a body framed by Content-Length or valid chunks.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "bad_json" | "invalid_field" | "bad_request";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `auth_required`: Sign the call with the X-Service-* headers, or send org_id and secret in the body.
             *
             *     `bad_headers`: Send all four X-Service-* headers, well formed (ASCII domain, Unix seconds, 32 hex nonce, base64).
             *
             *     `stale_timestamp`: X-Service-Ts is more than 300 seconds from our clock; sync your clock.
             *
             *     `nonce_reused`: This nonce was already used; send a fresh random nonce with every call.
             *
             *     `bad_signature`: The signature does not match the body and headers under your key.
             *
             *     `unknown_org`: No company is registered with this domain or org_id.
             *
             *     `bad_secret`: The secret is wrong.
             *
             *     `key_unavailable`: Your key file could not be fetched for 24 hours; publish it at /.well-known/service.json.
             *
             *     `key_changed`: Your key file holds a different key than the one confirmed; confirm the rotation in your account area.
             *
             *     `live_secret`: This is a live secret: a call with "sandbox": true takes your sandbox secret (glsb_).
             *
             *     `sandbox_secret`: This is a sandbox secret: send "sandbox": true with it, or use your live secret (glsk_).
             */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "auth_required" | "bad_headers" | "stale_timestamp" | "nonce_reused" | "bad_signature" | "unknown_org" | "bad_secret" | "key_unavailable" | "key_changed" | "live_secret" | "sandbox_secret";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `org_not_approved`: The company is not approved, or is suspended.
             *
             *     `secret_disabled`: This company has a domain: sign calls with its key instead of a secret.
             */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "org_not_approved" | "secret_disabled";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `not_found`: No such request for this company. */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `request_timeout`: The request did not arrive in time; send the headers and body at once, then retry. */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_timeout";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `too_large`: The body is larger than 16 KiB. */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `unsupported_media_type`: Send the body with Content-Type: application/json. */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unsupported_media_type";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `headers_too_large`: The request line and headers are larger than 16 KiB; send fewer or shorter headers. */
            431: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "headers_too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `internal`: Something went wrong on our side; quote the X-Request-Id when you report it. */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "internal";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
        };
    };
    open: {
        parameters: {
            query?: never;
            header?: {
                /** @description For 24 hours the same key with the same body answers the first answer again instead of acting twice; with another body, 422 idempotency_conflict; while the first call runs, 409 idempotency_in_progress. A 429 rate_limit is not kept. Keys are per company and per action. */
                "Idempotency-Key"?: components["parameters"]["IdempotencyKey"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description A JSON object of at most 16 KiB, sent with Content-Type: application/json. In secret mode it also carries `org_id` and `secret` (SecretCredentials). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["OpenBody"] & components["schemas"]["SecretCredentials"];
            };
        };
        responses: {
            /** @description The controller confirmed the opening. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAnswer"];
                };
            };
            /**
             * @description `bad_json`: The body must be a JSON object.
             *
             *     `invalid_field`: A field has the wrong type or is out of range.
             *
             *     `bad_request`: The request is not well-formed HTTP/1.1: send a valid request line, headers without control characters, and a body framed by Content-Length or valid chunks.
             *
             *     `actor_required`: Name the employee who opens in actor.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "bad_json" | "invalid_field" | "bad_request" | "actor_required";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `auth_required`: Sign the call with the X-Service-* headers, or send org_id and secret in the body.
             *
             *     `bad_headers`: Send all four X-Service-* headers, well formed (ASCII domain, Unix seconds, 32 hex nonce, base64).
             *
             *     `stale_timestamp`: X-Service-Ts is more than 300 seconds from our clock; sync your clock.
             *
             *     `nonce_reused`: This nonce was already used; send a fresh random nonce with every call.
             *
             *     `bad_signature`: The signature does not match the body and headers under your key.
             *
             *     `unknown_org`: No company is registered with this domain or org_id.
             *
             *     `bad_secret`: The secret is wrong.
             *
             *     `key_unavailable`: Your key file could not be fetched for 24 hours; publish it at /.well-known/service.json.
             *
             *     `key_changed`: Your key file holds a different key than the one confirmed; confirm the rotation in your account area.
             *
             *     `live_secret`: This is a live secret: a call with "sandbox": true takes your sandbox secret (glsb_).
             *
             *     `sandbox_secret`: This is a sandbox secret: send "sandbox": true with it, or use your live secret (glsk_).
             */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "auth_required" | "bad_headers" | "stale_timestamp" | "nonce_reused" | "bad_signature" | "unknown_org" | "bad_secret" | "key_unavailable" | "key_changed" | "live_secret" | "sandbox_secret";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `org_not_approved`: The company is not approved, or is suspended.
             *
             *     `secret_disabled`: This company has a domain: sign calls with its key instead of a secret.
             *
             *     `forbidden`: The key is not yours, or the object is not in the key.
             *
             *     `revoked`: The customer withdrew this access.
             *
             *     `expired`: The key's lifetime has ended.
             *
             *     `not_started`: The customer set a later start for this access; status shows it as shape.starts_at.
             *
             *     `outside_hours`: This is outside the hours the customer allowed; status shows them as shape.windows.
             *
             *     `openings_used`: Every opening the customer allowed has been used; ask them for more.
             *
             *     `denied`: The customer denied this opening when asked; nothing was opened. Ask them before you try again.
             *
             *     `not_answered`: The customer asks to approve each opening and did not answer in time; nothing was opened. Call them, then try again.
             */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "org_not_approved" | "secret_disabled" | "forbidden" | "revoked" | "expired" | "not_started" | "outside_hours" | "openings_used" | "denied" | "not_answered";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `request_timeout`: The request did not arrive in time; send the headers and body at once, then retry. */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_timeout";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `idempotency_in_progress`: A call with this Idempotency-Key is still being processed; retry in a moment. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "idempotency_in_progress";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `too_large`: The body is larger than 16 KiB. */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `unsupported_media_type`: Send the body with Content-Type: application/json. */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unsupported_media_type";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `idempotency_conflict`: This Idempotency-Key was already used with a different body; use a new key for a new call. */
            422: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "idempotency_conflict";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `rate_limit`: Too many openings with this key in the last minute; retry after the delay. */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "rate_limit";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `headers_too_large`: The request line and headers are larger than 16 KiB; send fewer or shorter headers. */
            431: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "headers_too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `internal`: Something went wrong on our side; quote the X-Request-Id when you report it. */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "internal";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `device_error`: The controller reported a failure; see detail. */
            502: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "device_error";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `device_offline`: The barrier's controller is not connected; nothing was queued.
             *
             *     `overloaded`: The service has as many openings waiting as it can take; nothing was written. Retry after the delay.
             */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "device_offline" | "overloaded";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `device_timeout`: The controller did not confirm the opening within 8 seconds. */
            504: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "device_timeout";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
        };
    };
    trigger: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description A JSON object of at most 16 KiB, sent with Content-Type: application/json. In secret mode it also carries `org_id` and `secret` (SecretCredentials). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["TriggerBody"] & components["schemas"]["SecretCredentials"];
            };
        };
        responses: {
            /** @description The sample event was written; it is delivered as any event is. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TriggerAnswer"];
                };
            };
            /**
             * @description `bad_json`: The body must be a JSON object.
             *
             *     `invalid_field`: A field has the wrong type or is out of range.
             *
             *     `bad_request`: The request is not well-formed HTTP/1.1: send a valid request line, headers without control characters, and a body framed by Content-Length or valid chunks.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "bad_json" | "invalid_field" | "bad_request";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `auth_required`: Sign the call with the X-Service-* headers, or send org_id and secret in the body.
             *
             *     `bad_headers`: Send all four X-Service-* headers, well formed (ASCII domain, Unix seconds, 32 hex nonce, base64).
             *
             *     `stale_timestamp`: X-Service-Ts is more than 300 seconds from our clock; sync your clock.
             *
             *     `nonce_reused`: This nonce was already used; send a fresh random nonce with every call.
             *
             *     `bad_signature`: The signature does not match the body and headers under your key.
             *
             *     `unknown_org`: No company is registered with this domain or org_id.
             *
             *     `bad_secret`: The secret is wrong.
             *
             *     `key_unavailable`: Your key file could not be fetched for 24 hours; publish it at /.well-known/service.json.
             *
             *     `key_changed`: Your key file holds a different key than the one confirmed; confirm the rotation in your account area.
             *
             *     `live_secret`: This is a live secret: a call with "sandbox": true takes your sandbox secret (glsb_).
             *
             *     `sandbox_secret`: This is a sandbox secret: send "sandbox": true with it, or use your live secret (glsk_).
             */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "auth_required" | "bad_headers" | "stale_timestamp" | "nonce_reused" | "bad_signature" | "unknown_org" | "bad_secret" | "key_unavailable" | "key_changed" | "live_secret" | "sandbox_secret";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `org_not_approved`: The company is not approved, or is suspended.
             *
             *     `secret_disabled`: This company has a domain: sign calls with its key instead of a secret.
             */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "org_not_approved" | "secret_disabled";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `request_timeout`: The request did not arrive in time; send the headers and body at once, then retry. */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_timeout";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `too_large`: The body is larger than 16 KiB. */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `unsupported_media_type`: Send the body with Content-Type: application/json. */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unsupported_media_type";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `headers_too_large`: The request line and headers are larger than 16 KiB; send fewer or shorter headers. */
            431: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "headers_too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `internal`: Something went wrong on our side; quote the X-Request-Id when you report it. */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "internal";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
        };
    };
    listen: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description A JSON object of at most 16 KiB, sent with Content-Type: application/json. In secret mode it also carries `org_id` and `secret` (SecretCredentials). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["ListenBody"] & components["schemas"]["SecretCredentials"];
            };
        };
        responses: {
            /** @description A `text/event-stream`: each event a Server-Sent Event named after its kind, its `data` this JSON; a comment line every 25 s keeps the connection open through proxies. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["ListenMessage"];
                };
            };
            /**
             * @description `bad_json`: The body must be a JSON object.
             *
             *     `invalid_field`: A field has the wrong type or is out of range.
             *
             *     `bad_request`: The request is not well-formed HTTP/1.1: send a valid request line, headers without control characters, and a body framed by Content-Length or valid chunks.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "bad_json" | "invalid_field" | "bad_request";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `auth_required`: Sign the call with the X-Service-* headers, or send org_id and secret in the body.
             *
             *     `bad_headers`: Send all four X-Service-* headers, well formed (ASCII domain, Unix seconds, 32 hex nonce, base64).
             *
             *     `stale_timestamp`: X-Service-Ts is more than 300 seconds from our clock; sync your clock.
             *
             *     `nonce_reused`: This nonce was already used; send a fresh random nonce with every call.
             *
             *     `bad_signature`: The signature does not match the body and headers under your key.
             *
             *     `unknown_org`: No company is registered with this domain or org_id.
             *
             *     `bad_secret`: The secret is wrong.
             *
             *     `key_unavailable`: Your key file could not be fetched for 24 hours; publish it at /.well-known/service.json.
             *
             *     `key_changed`: Your key file holds a different key than the one confirmed; confirm the rotation in your account area.
             *
             *     `live_secret`: This is a live secret: a call with "sandbox": true takes your sandbox secret (glsb_).
             *
             *     `sandbox_secret`: This is a sandbox secret: send "sandbox": true with it, or use your live secret (glsk_).
             */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "auth_required" | "bad_headers" | "stale_timestamp" | "nonce_reused" | "bad_signature" | "unknown_org" | "bad_secret" | "key_unavailable" | "key_changed" | "live_secret" | "sandbox_secret";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `org_not_approved`: The company is not approved, or is suspended.
             *
             *     `secret_disabled`: This company has a domain: sign calls with its key instead of a secret.
             */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "org_not_approved" | "secret_disabled";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `request_timeout`: The request did not arrive in time; send the headers and body at once, then retry. */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_timeout";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `too_large`: The body is larger than 16 KiB. */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `unsupported_media_type`: Send the body with Content-Type: application/json. */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unsupported_media_type";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `too_many_streams`: You have as many listen streams open as allowed; close one before you open another. */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    "Retry-After": components["headers"]["RetryAfter"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "too_many_streams";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `headers_too_large`: The request line and headers are larger than 16 KiB; send fewer or shorter headers. */
            431: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "headers_too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `internal`: Something went wrong on our side; quote the X-Request-Id when you report it. */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "internal";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
        };
    };
    sandbox: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description A JSON object of at most 16 KiB, sent with Content-Type: application/json. In secret mode it also carries `org_id` and `secret` (SecretCredentials). */
        requestBody: {
            content: {
                "application/json": components["schemas"]["SandboxBody"] & components["schemas"]["SecretCredentials"];
            };
        };
        responses: {
            /** @description What the move left, as `status` will read it. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SandboxAnswer"];
                };
            };
            /**
             * @description `bad_json`: The body must be a JSON object.
             *
             *     `invalid_field`: A field has the wrong type or is out of range.
             *
             *     `bad_request`: The request is not well-formed HTTP/1.1: send a valid request line, headers without control characters, and a body framed by Content-Length or valid chunks.
             *
             *     `sandbox_only`: a=sandbox moves your sandbox only: send "sandbox": true in the body.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "bad_json" | "invalid_field" | "bad_request" | "sandbox_only";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `auth_required`: Sign the call with the X-Service-* headers, or send org_id and secret in the body.
             *
             *     `bad_headers`: Send all four X-Service-* headers, well formed (ASCII domain, Unix seconds, 32 hex nonce, base64).
             *
             *     `stale_timestamp`: X-Service-Ts is more than 300 seconds from our clock; sync your clock.
             *
             *     `nonce_reused`: This nonce was already used; send a fresh random nonce with every call.
             *
             *     `bad_signature`: The signature does not match the body and headers under your key.
             *
             *     `unknown_org`: No company is registered with this domain or org_id.
             *
             *     `bad_secret`: The secret is wrong.
             *
             *     `key_unavailable`: Your key file could not be fetched for 24 hours; publish it at /.well-known/service.json.
             *
             *     `key_changed`: Your key file holds a different key than the one confirmed; confirm the rotation in your account area.
             *
             *     `live_secret`: This is a live secret: a call with "sandbox": true takes your sandbox secret (glsb_).
             *
             *     `sandbox_secret`: This is a sandbox secret: send "sandbox": true with it, or use your live secret (glsk_).
             */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "auth_required" | "bad_headers" | "stale_timestamp" | "nonce_reused" | "bad_signature" | "unknown_org" | "bad_secret" | "key_unavailable" | "key_changed" | "live_secret" | "sandbox_secret";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /**
             * @description `org_not_approved`: The company is not approved, or is suspended.
             *
             *     `secret_disabled`: This company has a domain: sign calls with its key instead of a secret.
             */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "org_not_approved" | "secret_disabled";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `not_found`: No such request for this company. */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "not_found";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `request_timeout`: The request did not arrive in time; send the headers and body at once, then retry. */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "request_timeout";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `invalid_state`: The request is not in a state that allows this. */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "invalid_state";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `too_large`: The body is larger than 16 KiB. */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `unsupported_media_type`: Send the body with Content-Type: application/json. */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "unsupported_media_type";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `headers_too_large`: The request line and headers are larger than 16 KiB; send fewer or shorter headers. */
            431: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "headers_too_large";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
            /** @description `internal`: Something went wrong on our side; quote the X-Request-Id when you report it. */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        error: "internal";
                    } & WithRequired<components["schemas"]["Error"], "error">;
                };
            };
        };
    };
    event_request_claimed: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RequestClaimedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_request_issued: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RequestIssuedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_request_revoked: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RequestRevokedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_request_expired: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RequestExpiredEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_request_declined: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RequestDeclinedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_request_released: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["RequestReleasedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_key_expired: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["KeyExpiredEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_open_succeeded: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["OpenSucceededEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_open_failed: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["OpenFailedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_open_gate_opened: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["OpenGateOpenedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_open_gate_closed: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["OpenGateClosedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_open_gate_not_moved: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["OpenGateNotMovedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_gate_left_open: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["GateLeftOpenEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_gate_closed: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["GateClosedEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    event_ping: {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: drop a repeat by it. */
                "webhook-id": components["parameters"]["WebhookId"];
                /** @description Unix time in seconds of this attempt: refuse one more than 5 minutes from your clock. */
                "webhook-timestamp": components["parameters"]["WebhookTimestamp"];
                /** @description Space-separated signatures of `<webhook-id>.<webhook-timestamp>.<body>` (UTF-8, the raw body as received): `v1,<standard base64 HMAC-SHA256>` under each of your signing secrets still valid (`whsec_...`, from your callback page; two during a rotation), which the Standard Webhooks libraries verify, then `v1a,<standard base64 Ed25519 signature>` with our key, `{"key": "<base64>"}` at `/.well-known/service.json`. Any one that verifies is enough. */
                "webhook-signature": components["parameters"]["WebhookSignature"];
            };
            path?: never;
            cookie?: never;
        };
        /** @description The event, `{"type", "id", "at", "data"}`, signed as the headers say. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["PingEvent"];
            };
        };
        responses: {
            /** @description Delivered: nothing more is sent for this event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
type WithRequired<T, K extends keyof T> = T & {
    [P in K]-?: T[P];
};
