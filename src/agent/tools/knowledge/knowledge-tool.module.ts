import { Module } from '@nestjs/common';
import { KnowledgeModule } from '../../../knowledge/knowledge.module.js';
import { KnowledgeSearchTool } from './knowledge-search.tool.js';

@Module({ imports: [KnowledgeModule], providers: [KnowledgeSearchTool] })
export class KnowledgeToolModule {}
