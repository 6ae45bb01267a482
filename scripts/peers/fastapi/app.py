"""What a team would build instead of this product in Python (issue 37's peer (b)): FastAPI with
asyncpg's connection pool, run by uvicorn (uvloop, httptools, 2 workers), one table, one
`INSERT … RETURNING` per write, committed durably (PostgreSQL's defaults: fsync and
synchronous_commit on). The routes `make bench` measures, as FastAPI's documentation writes them:

    POST /announcements        {"title", "body"?}, with `Authorization: Bearer TOKEN`: 201, the row
    GET  /announcements        the first 10 by id: [{"id", "title"}]
    GET  /announcements/{id}   {"id", "title", "body"}, or 404

Environment: PEER_PG_DSN (postgres://postgres@127.0.0.1:5432/postgres), PEER_TABLE
(peer_announcements, made by scripts/http-bench.sh), PEER_TOKEN (bench-token).
Run: uvicorn app:app --app-dir scripts/peers/fastapi --workers 2 --loop uvloop --http httptools
"""

import os
from contextlib import asynccontextmanager

import asyncpg
from fastapi import FastAPI, Header, HTTPException
from pydantic import BaseModel

TABLE = os.environ.get("PEER_TABLE", "peer_announcements")
AUTHORIZATION = "Bearer " + os.environ.get("PEER_TOKEN", "bench-token")
pool = None


@asynccontextmanager
async def lifespan(app):
    global pool
    pool = await asyncpg.create_pool(os.environ.get("PEER_PG_DSN", "postgres://postgres@127.0.0.1:5432/postgres"))
    yield
    await pool.close()


app = FastAPI(lifespan=lifespan)


class Draft(BaseModel):
    title: str
    body: str | None = None


@app.post("/announcements", status_code=201)
async def create(draft: Draft, authorization: str | None = Header(default=None)):
    if authorization != AUTHORIZATION:
        raise HTTPException(status_code=401)
    if not draft.title:
        raise HTTPException(status_code=422, detail="title must not be empty")
    row = await pool.fetchrow(f"INSERT INTO {TABLE} (title, body) VALUES ($1, $2) RETURNING id, title, body", draft.title, draft.body)
    return dict(row)


@app.get("/announcements")
async def listing():
    rows = await pool.fetch(f"SELECT id, title FROM {TABLE} ORDER BY id LIMIT 10")
    return [dict(row) for row in rows]


@app.get("/announcements/{id}")
async def one(id: int):
    row = await pool.fetchrow(f"SELECT id, title, body FROM {TABLE} WHERE id = $1", id)
    if row is None:
        raise HTTPException(status_code=404)
    return dict(row)
