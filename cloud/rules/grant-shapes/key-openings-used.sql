-- key_openings_used: how many of a key's openings are spent, for a key whose shape allows a number of them in all
-- (docs/design.md section 3.1), the one place this is counted: openings that reached, or may have reached, the
-- gate, that is, under way (no outcome yet), opened, or unanswered (a command nobody answered may have opened
-- it). A refused, offline or failed attempt leaves its opening to the next try. Read through
-- journal_key_dispatched (migration 0003: the key's entries with a command id), and never more than `p_limit` of
-- them, what the key allows, so an `open` reads at most that many rows however long the key's journal grows.
-- Asked by open_attempt (cloud/rules/opening/open-attempt.sql), by `status` and by the customer's pages
-- (cloud/rules/grant-shapes/openings-used.ts). A plain SQL function, so the planner inlines it into its callers.
-- Applied after the migrations on every start, by cloud/foundation/db/functions.ts.
create or replace function key_openings_used(p_key integer, p_limit integer)
returns integer
language sql stable
as $body$
  select count(*)::integer
    from (select 1
            from journal
           where journal.key_id = p_key and journal.command_id is not null
             and (journal.outcome is null or journal.outcome in ('opened', 'device_timeout'))
           limit p_limit) spent
$body$;
