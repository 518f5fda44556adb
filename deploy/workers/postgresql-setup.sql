-- The database and its owner for pbem (run as the postgres superuser: sudo -u postgres psql -f ...).
-- pbem creates and migrates its tables itself at the first start of a worker.
CREATE ROLE pbem LOGIN PASSWORD 'change-me';
CREATE DATABASE pbem OWNER pbem ENCODING 'UTF8' TEMPLATE template0;
-- Workers on other machines: allow them in pg_hba.conf, e.g.
--   hostssl  pbem  pbem  10.0.0.0/24  scram-sha-256
-- and listen_addresses in postgresql.conf. pbem uses about 10 connections per worker (one of them
-- LISTENs for new mail the whole time), one more with the IMAP door: keep max_connections above that.
